package plot

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPanelsDrawsEveryMetricWithOneLegend(t *testing.T) {
	curve := func(name string, scale float64) Curve {
		c := Curve{Name: name, X: []float64{0, 50, 99}}
		for _, x := range c.X {
			m := scale * (1 + x/100)
			c.Mean, c.Lo, c.Hi = append(c.Mean, m), append(c.Lo, 0.9*m), append(c.Hi, 1.1*m)
		}
		return c
	}
	noWeak := curve("raft", 1)
	noWeak.Mean[0], noWeak.Lo[0], noWeak.Hi[0] = math.NaN(), math.NaN(), math.NaN()
	panels := []Panel{
		{Title: "throughput", XLabel: "weak-ratio (%)", YLabel: "ops/s", Curves: []Curve{curve("curp-ho", 20000), curve("raft", 15000)}},
		{Title: "weak p50", XLabel: "weak-ratio (%)", YLabel: "ms", LogY: true, Curves: []Curve{curve("curp-ho", 2), noWeak}},
		{Title: "nothing", LogY: true, Curves: []Curve{{Name: "curp-ho", X: []float64{0}, Mean: []float64{math.NaN()},
			Lo: []float64{math.NaN()}, Hi: []float64{math.NaN()}}}},
	}
	path := filepath.Join(t.TempDir(), "experiment.png")
	require.NoError(t, Panels("t-property", panels, path))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), img.Bounds().Dy(), "three panels in a row")
	if *preview != "" {
		require.NoError(t, Panels("t-property", panels, filepath.Join(*preview, "experiment.png")))
	}
}

func TestPanelsRefusesWhatItCannotDraw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.png")
	require.ErrorContains(t, Panels("empty", nil, path), "no panels")
	bad := Panel{Title: "bad", Curves: []Curve{{Name: "curp", X: []float64{1, 2}, Mean: []float64{1}}}}
	require.ErrorContains(t, Panels("bad", []Panel{bad}, path), "2 x values, 1 means")
	none := Panel{Title: "none", Curves: []Curve{{Name: "curp"}}}
	require.ErrorContains(t, Panels("none", []Panel{none}, path), "no curve has a point")
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err), "nothing written")
}

// TestSlantCrowded: protocols' names along an axis are slanted, where
// side by side they would run into each other; a few short category names
// stay level.
func TestSlantCrowded(t *testing.T) {
	protocols := []string{"curp", "curp-ht", "curp-ho", "raft", "raft-ht", "mongo", "pileus", "pileus-ht"}
	p := newPlot()
	slantCrowded(p, protocols)
	require.NotZero(t, p.X.Tick.Label.Rotation)
	p = newPlot()
	slantCrowded(p, []string{"a", "b", "c", "d", "e", "f"})
	require.Zero(t, p.X.Tick.Label.Rotation)

	var panel Panel
	panel.Title, panel.XTicks, panel.LogY = "weak-scan p50", protocols, true
	for i, name := range protocols {
		m := float64(i + 1)
		panel.Curves = append(panel.Curves, Curve{Name: name, X: []float64{float64(i)}, Mean: []float64{m}, Lo: []float64{m}, Hi: []float64{m}})
	}
	require.NoError(t, Panels("tao", []Panel{panel}, filepath.Join(t.TempDir(), "tao.png")))
}
