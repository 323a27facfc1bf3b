package main

import (
	"image/color"
	"io"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

var (
	colorOK       = color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff} // admitted and answered
	colorFailed   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff} // admitted, then failed
	colorRejected = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // rejected by the breaker
	colorDown     = color.RGBA{R: 0xff, G: 0xd9, B: 0xd9, A: 0xff} // shading of Down phases
	colorEdge     = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff} // phase boundaries
)

// plotScenario draws the first repetition of a scenario: one panel per library, calls per
// bucket that succeeded, failed and were rejected, with Down phases shaded and every phase
// boundary marked.
func plotScenario(path string, r scenarioResult) error {
	const width, panel = 8 * vg.Inch, 1.9 * vg.Inch
	rows := len(r.libs)
	plots := make([][]*plot.Plot, rows)
	var ymax float64
	for _, tl := range r.first {
		for _, b := range tl.Buckets {
			ymax = max(ymax, float64(b.Offered))
		}
	}
	for i, lib := range r.libs {
		p, err := panelOf(lib.Name, r.first[i], ymax*1.1, i == 0, i == rows-1)
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{p}
	}
	var img interface {
		vg.CanvasSizer
		WriteTo(io.Writer) (int64, error)
	}
	if strings.HasSuffix(path, ".png") {
		img = vgimg.PngCanvas{Canvas: vgimg.New(width, panel*vg.Length(rows))}
	} else {
		img = vgsvg.New(width, panel*vg.Length(rows))
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: 1, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadY: 6}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panelOf is one library's panel.
func panelOf(name string, tl scenario.Timeline, ymax float64, legend, xlabel bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = name
	p.Y.Label.Text = "calls / 100 ms"
	if xlabel {
		p.X.Label.Text = "seconds since the start (phases: " + phaseNames(tl.Script) + ")"
	}
	total := tl.Script.Total().Seconds()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, total, 0, ymax

	for i, ph := range tl.Script.Phases {
		from, to := tl.Script.Start(i).Seconds(), tl.Script.Start(i+1).Seconds()
		if ph.Down {
			shade, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: 0}, {X: to, Y: 0}, {X: to, Y: ymax}, {X: from, Y: ymax}})
			if err != nil {
				return nil, err
			}
			shade.Color, shade.LineStyle.Width = colorDown, 0
			p.Add(shade)
		}
		if i > 0 {
			edge, err := plotter.NewLine(plotter.XYs{{X: from, Y: 0}, {X: from, Y: ymax}})
			if err != nil {
				return nil, err
			}
			edge.Color, edge.Dashes = colorEdge, []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(edge)
		}
	}

	series := []struct {
		label string
		c     color.Color
		of    func(scenario.Bucket) int
	}{
		{"succeeded", colorOK, scenario.Bucket.Succeeded},
		{"failed", colorFailed, func(b scenario.Bucket) int { return b.Failed }},
		{"rejected", colorRejected, func(b scenario.Bucket) int { return b.Rejected }},
	}
	size := tl.BucketSize.Seconds()
	for _, s := range series {
		xys := make(plotter.XYs, 0, 2*len(tl.Buckets))
		for k, b := range tl.Buckets {
			// A step per bucket: the count holds over the whole bucket.
			y := float64(s.of(b))
			xys = append(xys, plotter.XY{X: float64(k) * size, Y: y}, plotter.XY{X: float64(k+1) * size, Y: y})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = s.c, vg.Points(1.2)
		p.Add(l)
		if legend {
			p.Legend.Add(s.label, l)
		}
	}
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.Padding = vg.Points(2)
	return p, nil
}

func phaseNames(s scenario.Script) string {
	out := ""
	for i, p := range s.Phases {
		if i > 0 {
			out += ", "
		}
		out += p.Name
	}
	return out + "; shaded: down"
}
