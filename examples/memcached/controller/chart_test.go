package controller_test

import (
	"fmt"
	"math"
	"strings"
)

// sample is one read of the metrics endpoint during a run: when, the Memcached's
// reconciles and the writes of every kind so far, and what the test was doing.
type sample struct {
	seconds, reconciles, writes float64
	phase                       string
}

// chart draws the reconciles and the writes of a run, from its first sample on, over
// bands naming what the test was doing: docs/images/memcached-fight.svg, redrawn by
// RECONCILEKIT_CHART=<path> on TestMemcachedMetricsShowItsConditionsAndAFightAndGoWithIt.
func chart(samples []sample) []byte {
	const width, height, left, right, top, bottom = 720, 320, 40, 700, 44, 260
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	if len(samples) < 2 {
		b.WriteString("</svg>\n")
		return []byte(b.String())
	}
	first, last := samples[0], samples[len(samples)-1]
	span := last.seconds - first.seconds
	top1 := math.Max(last.reconciles-first.reconciles, last.writes-first.writes)
	top1 = math.Max(10, math.Ceil(top1/10)*10)
	x := func(s float64) float64 { return left + (s-first.seconds)/span*(right-left) }
	y := func(v float64) float64 { return bottom - v/top1*(bottom-top) }

	// The phases, as bands: each from its first sample to the next phase's.
	shades := []string{"#f4f4f4", "#e8eef7", "#fbeaea", "#eef7ea"}
	for i, start, n := 0, 0, 0; i <= len(samples); i++ {
		if i < len(samples) && samples[i].phase == samples[start].phase {
			continue
		}
		end := samples[min(i, len(samples)-1)].seconds
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n",
			x(samples[start].seconds), top, x(end)-x(samples[start].seconds), bottom-top, shades[n%len(shades)])
		// Under the axis, on two rows, so that the names of short phases do not overlap.
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", x(samples[start].seconds)+2, bottom+32+n%2*14, samples[start].phase)
		start, n = i, n+1
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n",
		left, bottom, right, bottom, left, top, left, bottom)
	line := func(color string, v func(sample) float64) {
		var points []string
		for _, s := range samples {
			points = append(points, fmt.Sprintf("%.1f,%.1f", x(s.seconds), y(v(s))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(points, " "))
	}
	line("#1f77b4", func(s sample) float64 { return s.reconciles - first.reconciles })
	line("#d62728", func(s sample) float64 { return s.writes - first.writes })
	fmt.Fprintf(&b, `<text x="%d" y="14" fill="#1f77b4">Memcached reconciles (cumulative)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%d" y="28" fill="#d62728">writes of every kind (cumulative)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">(shaded: what the test does)</text>`+"\n", left+300, 14)
	fmt.Fprintf(&b, `<text x="%d" y="%d">0 s</text><text x="%d" y="%d">%.0f s</text>`+"\n", left, bottom+16, right-30, bottom+16, span)
	fmt.Fprintf(&b, `<text x="4" y="%d">%.0f</text><text x="24" y="%d">0</text>`+"\n", top+4, top1, bottom)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
