package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/hybridkv/hybridkv/internal/probe"
)

// machineProbe is `hybridkv probe` running beside a benchmark at the lowest
// priority: what it measured tells a run that slowed from a machine that
// did.
type machineProbe struct {
	cmd   *exec.Cmd
	stdin io.Closer
	start time.Time
	// started is when the probe's process started.
	started time.Time
	done    chan struct{}

	mu      sync.Mutex
	samples []probe.Sample
	bad     error
}

// startMachineProbe starts binary's probe; its samples are timed from
// start, the run's clock, as they arrive.
func startMachineProbe(ctx context.Context, binary string, start time.Time) (*machineProbe, error) {
	cmd := exec.CommandContext(ctx, binary, "probe", "--interval", "1s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("machine probe: %w", err)
	}
	p := &machineProbe{cmd: cmd, stdin: stdin, start: start, started: time.Now(), done: make(chan struct{})}
	go p.read(stdout)
	return p, nil
}

func (p *machineProbe) read(stdout io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		s, err := probe.Parse(sc.Text())
		p.mu.Lock()
		if err != nil {
			p.bad = err
		} else {
			// The run's clock, not the probe's: the probe started later.
			s.Seconds = time.Since(p.start).Seconds()
			p.samples = append(p.samples, s)
		}
		p.mu.Unlock()
	}
}

// probeResult is what a machine probe measured, and what it cost: the
// CPU time it took from the run it measured, over how long it ran.
type probeResult struct {
	samples  []probe.Sample
	cpu, ran time.Duration
}

// note says what the probe cost the run.
func (r probeResult) note() string {
	return fmt.Sprintf("machine probe: %.1f s of CPU over the %.0f s it ran (%.2f %% of one core), %d samples",
		r.cpu.Seconds(), r.ran.Seconds(), 100*r.cpu.Seconds()/max(r.ran.Seconds(), 1e-9), len(r.samples))
}

// stop ends the probe (closing its standard input ends it) and returns
// what it measured; a run without a probe measured nothing.
func (p *machineProbe) stop() (*probeResult, error) {
	if p == nil {
		return nil, nil
	}
	p.stdin.Close()
	<-p.done
	err := p.cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	res := &probeResult{samples: p.samples, ran: time.Since(p.started)}
	if st := p.cmd.ProcessState; st != nil {
		res.cpu = st.UserTime() + st.SystemTime()
	}
	if p.bad != nil {
		return res, p.bad
	}
	if err != nil {
		return res, fmt.Errorf("machine probe: %w", err)
	}
	return res, nil
}

// machineSamples is what the probe measured, if it ran.
func (r *probeResult) machineSamples() []probe.Sample {
	if r == nil {
		return nil
	}
	return r.samples
}

// startProbe starts the machine probe when the run asks for one.
func (r *run) startProbe(ctx context.Context) (*machineProbe, error) {
	if r.opts.ProbeBinary == "" {
		return nil, nil
	}
	return startMachineProbe(ctx, r.opts.ProbeBinary, r.start)
}
