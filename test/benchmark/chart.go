package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The chart's geometry, in pixels: one panel per kind and figure, kinds side by side,
// figures one above the other.
const (
	panelWidth  = 310
	plotWidth   = 240
	plotHeight  = 180
	rowHeight   = 260
	chartTop    = 60
	chartLeft   = 60
	legendSpace = 40
	// legendEntryWidth and legendLineHeight are one legend entry's room.
	legendEntryWidth = 170
	legendLineHeight = 20
)

// The colour of each implementation's line; the ideal pipelines', the floors, are dashed,
// as is the bare pipeline's, the control plane's limit.
var colours = map[string]string{bare: "#aaaaaa", ideal: "#555555", fullIdeal: "#7570b3", watching: "#b2abd2", seeded: "#d95f02", fluxStyle: "#e7298a", capiStyle: "#e6ab02",
	library: "#1b7f9e", libraryProcess: "#0b4f6e", traced: "#66a61e", unguarded: "#a6761d"}

func lineStyle(impl string) string {
	if impl == bare || isIdeal(impl) {
		return fmt.Sprintf(`stroke=%q stroke-dasharray="5 4"`, colours[impl])
	}
	return fmt.Sprintf(`stroke=%q`, colours[impl])
}

// A figure is what one row of the chart plots, per object, against N.
type figure struct {
	label string
	value func(m measurement, n float64) float64
}

var figures = []figure{
	{"convergence, ms per object", func(m measurement, n float64) float64 { return 1000 * m.Converge / n }},
	{"API server CPU, ms per object", func(m measurement, n float64) float64 { return 1000 * m.APIServerCPU / n }},
}

// chart draws, as SVG, what an object costs against N for every implementation, on a
// logarithmic N axis: the convergence time per object, then the API server's CPU per
// object, one panel per kind. A flat line is a cost that does not grow with N.
func chart(results []result) []byte {
	var shown []*kind
	for _, k := range kinds {
		if slices.ContainsFunc(results, func(r result) bool { return r.Kind == k.name }) {
			shown = append(shown, k)
		}
	}
	var legend []string
	for _, impl := range implementations {
		if slices.ContainsFunc(results, func(r result) bool { return r.Implementation == impl }) {
			legend = append(legend, impl)
		}
	}
	// The legend wraps into as many lines as its entries need.
	width := chartLeft + len(shown)*panelWidth
	perLine := max(1, (width-chartLeft)/legendEntryWidth)
	lines := max(1, (len(legend)+perLine-1)/perLine)
	height := chartTop + len(figures)*rowHeight + legendSpace + (lines-1)*legendLineHeight
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" font-weight="bold">What an object costs against N (medians; a fresh, unthrottled local cluster per run)</text>`+"\n", chartLeft-40)
	for row, f := range figures {
		top := chartTop + row*rowHeight
		fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+plotHeight/2, f.label)
		for i, k := range shown {
			var mine []result
			for _, r := range results {
				if r.Kind == k.name {
					mine = append(mine, r)
				}
			}
			panel(&b, chartLeft+i*panelWidth, top, k.name, f, mine)
		}
	}
	for i, impl := range legend {
		x, y := chartLeft+(i%perLine)*legendEntryWidth, height-18-(lines-1-i/perLine)*legendLineHeight
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke-width="2.5" %s/>`+"\n", x, y-4, x+30, y-4, lineStyle(impl))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+38, y, impl)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// panel draws one kind's lines of figure f with their axes, the plot's top left corner at
// left, top.
func panel(b *bytes.Buffer, left, top int, title string, f figure, results []result) {
	minN, maxN, maxValue := math.Inf(1), 0.0, 0.0
	for _, r := range results {
		n := float64(r.N)
		minN, maxN, maxValue = min(minN, n), max(maxN, n), max(maxValue, f.value(r.Median, n))
	}
	// N spans whole powers of ten, logarithmically.
	lo, hi := math.Floor(math.Log10(minN)), math.Ceil(math.Log10(maxN))
	if hi == lo {
		hi++
	}
	yStep := niceStep(maxValue, 4)
	yMax := math.Ceil(maxValue/yStep) * yStep
	if yMax == 0 {
		yMax = 1
	}
	x := func(n float64) float64 { return float64(left) + (math.Log10(n)-lo)/(hi-lo)*plotWidth }
	y := func(v float64) float64 { return float64(top) + plotHeight - v/yMax*plotHeight }

	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", left+plotWidth/2, top-10, title)
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y(v), left+plotWidth, y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", left-6, y(v)+4, v)
	}
	for e := lo; e <= hi; e++ {
		n := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", x(n), top, x(n), top+plotHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", x(n), top+plotHeight+16, n)
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999999"/>`+"\n", left, top, plotWidth, plotHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">N objects</text>`+"\n", left+plotWidth/2, top+plotHeight+32)

	for _, impl := range implementations {
		var points []string
		for _, r := range results { // sorted by N
			if r.Implementation == impl {
				points = append(points, fmt.Sprintf("%.1f,%.1f", x(float64(r.N)), y(f.value(r.Median, float64(r.N)))))
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
