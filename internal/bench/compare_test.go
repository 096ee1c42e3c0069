package bench

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/stats"
)

func sampleReports() []*stats.Report {
	strong := stats.ClassSummary{Count: 10, AvgMs: 52, P50Ms: 51.5, P99Ms: 58}
	weak := stats.ClassSummary{Count: 10, AvgMs: 0.3, P50Ms: 0.2, P99Ms: 1.1}
	return []*stats.Report{
		{Protocol: "curp-ho", Throughput: 230, FastPathRatio: 0.99, FastPathKnown: true, Strong: strong, Weak: weak,
			All: stats.ClassSummary{Count: 20, AvgMs: 26, P50Ms: 20}, Classes: map[string]stats.ClassSummary{"strong-read": strong, "weak-read": weak}},
		{Protocol: "raft", Throughput: 77, Strong: strong,
			All: stats.ClassSummary{Count: 10, AvgMs: 120, P50Ms: 101}, Classes: map[string]stats.ClassSummary{"strong-read": strong}},
	}
}

func TestWriteComparison(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteComparison(&b, sampleReports()))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^\s*curp-ho\s+230\s+99\.0%\s+51\.50 / 58\.00\s+0\.20 / 1\.10\s+-\s+51\.50 / 58\.00\s+-\s+0\.20 / 1\.10$`, lines[1])
	require.Regexp(t, `^\s*raft\s+77\s+-\s+51\.50 / 58\.00\s+-`, lines[2])
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, []string{"a", "b"}, sampleReports()))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, len(rows[0]), len(rows[1]))
	require.Equal(t, []string{"curp-ho", "a"}, rows[1][:2])
	require.Equal(t, "230.000", rows[1][7])
}

func TestPeak(t *testing.T) {
	rs := sampleReports()
	require.Equal(t, "curp-ho", Peak(rs, 100).Protocol, "raft's average exceeds the limit")
	require.Nil(t, Peak(rs, 10))
}

// TestComparisonWithScans: a scan class gets a column of the table only
// when some report has scans of it; the CSV always has both, after the
// four classes it had before.
func TestComparisonWithScans(t *testing.T) {
	reports := sampleReports()
	reports[0].Classes["weak-scan"] = stats.ClassSummary{Count: 3, P50Ms: 4, P99Ms: 9}
	var b bytes.Buffer
	require.NoError(t, WriteComparison(&b, reports))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Contains(t, lines[0], "weak-scan p50/p99")
	require.NotContains(t, lines[0], "strong-scan")
	require.Regexp(t, `0\.20 / 1\.10\s+4\.00 / 9\.00$`, lines[1])
	require.Regexp(t, `-$`, lines[2])

	b.Reset()
	require.NoError(t, WriteCSV(&b, nil, reports))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	head := rows[0]
	at := func(col string) int { return slices.Index(head, col) }
	require.Equal(t, at("weak-read_max_ms")+1, at("strong-scan_count"))
	require.Equal(t, at("strong-scan_max_ms")+1, at("weak-scan_count"))
	require.Equal(t, "3", rows[1][at("weak-scan_count")])
	require.Equal(t, "0", rows[2][at("weak-scan_count")])
}
