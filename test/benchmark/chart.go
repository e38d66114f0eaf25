package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The chart's geometry, in pixels: one panel per kind, side by side.
const (
	panelWidth  = 310
	plotWidth   = 240
	plotTop     = 60
	plotHeight  = 220
	chartLeft   = 60
	chartHeight = 370
)

// The colour of each implementation's line; the bare pipeline's, a limit, is dashed.
var colours = map[string]string{bare: "#777777", seeded: "#d95f02", library: "#1b7f9e"}

func lineStyle(impl string) string {
	if impl == bare {
		return fmt.Sprintf(`stroke=%q stroke-dasharray="5 4"`, colours[impl])
	}
	return fmt.Sprintf(`stroke=%q`, colours[impl])
}

// chart draws, as SVG, the convergence time of every implementation against N, one panel
// per kind.
func chart(results []result) []byte {
	var shown []*kind
	for _, k := range kinds {
		if slices.ContainsFunc(results, func(r result) bool { return r.Kind == k.name }) {
			shown = append(shown, k)
		}
	}
	width := chartLeft + len(shown)*panelWidth
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, chartHeight, width, chartHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, chartHeight)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" font-weight="bold">Real convergence time against N (medians; a fresh, unthrottled local cluster per run)</text>`+"\n", chartLeft-40)
	fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">seconds until every object converged</text>`+"\n", plotTop+plotHeight/2)
	for i, k := range shown {
		var mine []result
		for _, r := range results {
			if r.Kind == k.name {
				mine = append(mine, r)
			}
		}
		panel(&b, chartLeft+i*panelWidth, k.name, mine)
	}
	for i, impl := range implementations {
		x := chartLeft + i*170
		y := chartHeight - 22
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke-width="2.5" %s/>`+"\n", x, y-4, x+30, y-4, lineStyle(impl))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+38, y, impl)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// panel draws one kind's lines with their axes, the plot's left edge at left.
func panel(b *bytes.Buffer, left int, title string, results []result) {
	var maxN, maxTime float64
	for _, r := range results {
		maxN, maxTime = max(maxN, float64(r.N)), max(maxTime, r.Median.Converge)
	}
	xStep, yStep := niceStep(maxN, 4), niceStep(maxTime, 4)
	xMax, yMax := math.Ceil(maxN/xStep)*xStep, math.Ceil(maxTime/yStep)*yStep
	x := func(n float64) float64 { return float64(left) + n/xMax*plotWidth }
	y := func(s float64) float64 { return plotTop + plotHeight - s/yMax*plotHeight }

	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", left+plotWidth/2, plotTop-12, title)
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y(v), left+plotWidth, y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", left-6, y(v)+4, v)
	}
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", x(v), plotTop+plotHeight+16, v)
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999999"/>`+"\n", left, plotTop, plotWidth, plotHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">N objects</text>`+"\n", left+plotWidth/2, plotTop+plotHeight+34)

	for _, impl := range implementations {
		var points []string
		for _, r := range results { // sorted by N
			if r.Implementation == impl {
				points = append(points, fmt.Sprintf("%.1f,%.1f", x(float64(r.N)), y(r.Median.Converge)))
			}
		}
		if len(points) == 0 {
			continue
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke-width="2" %s/>`+"\n", strings.Join(points, " "), lineStyle(impl))
		for _, p := range points {
			cx, cy, _ := strings.Cut(p, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="white" stroke-width="2" stroke=%q/>`+"\n", cx, cy, colours[impl])
		}
	}
}

// niceStep is a round step (1, 2 or 5 times a power of ten) that divides span into about
// ticks parts.
func niceStep(span float64, ticks int) float64 {
	raw := span / float64(ticks)
	if raw <= 0 {
		return 1
	}
	magnitude := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*magnitude >= raw {
			return m * magnitude
		}
	}
	return 10 * magnitude
}
