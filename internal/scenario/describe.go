package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// describeOp names an operation: its id, what it does, its level.
func describeOp(id wire.OpID, op *wire.Op) string {
	what := "get " + keyName(op.Key)
	switch op.Kind {
	case wire.Put:
		what = fmt.Sprintf("put %s=%q", keyName(op.Key), op.Value)
	case wire.Delete:
		what = "del " + keyName(op.Key)
	}
	return fmt.Sprintf("%d#%d %s %s", id.Session, id.Seq, what, op.Level)
}

// keyName shows a key as the scenario wrote it, a token; one that could
// not be written so (empty, or with a space, a quote, '=' or a byte
// outside printable ASCII) is quoted.
func keyName(k string) string {
	if k == "" || strings.ContainsFunc(k, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '"' || r == '=' || r == ','
	}) {
		return strconv.Quote(k)
	}
	return k
}

// describe is a message in one line, what a reader of a scenario needs.
func describe(m wire.Message) string {
	switch m := m.(type) {
	case *wire.Request:
		var b strings.Builder
		b.WriteString("request " + describeOp(m.Op.ID, &m.Op))
		if m.PrevWeak != 0 {
			fmt.Fprintf(&b, " after #%d", m.PrevWeak)
		}
		if m.Flags&wire.FlagRetry != 0 {
			b.WriteString(" retry")
		}
		return b.String()
	case *wire.Reply:
		ok := "ok"
		if !m.Ok {
			ok = "refused"
		}
		s := fmt.Sprintf("reply %s %d#%d %s term %d", m.Kind, m.ID.Session, m.ID.Seq, ok, m.Term)
		if m.Slot != 0 {
			s += fmt.Sprintf(" slot %d", m.Slot)
		}
		return s
	case *wire.Raft:
		s := fmt.Sprintf("raft %v term %d", m.M.GetType(), m.M.GetTerm())
		if n := len(m.M.GetEntries()); n > 0 {
			s += fmt.Sprintf(" entries %d..%d", m.M.GetEntries()[0].GetIndex(), m.M.GetEntries()[n-1].GetIndex())
		}
		if c := m.M.GetCommit(); c != 0 {
			s += fmt.Sprintf(" commit %d", c)
		}
		return s
	case *wire.EPaxos:
		return describeEPaxos(m)
	case *wire.StaleRecord:
		s := "stale-record " + describeOp(m.Op.ID, &m.Op)
		if m.PrevWeak != 0 {
			s += fmt.Sprintf(" after #%d", m.PrevWeak)
		}
		return s
	}
	return m.Type().String()
}

// describeEPaxos shows what each step of EPaxos carries: the instance,
// the ballot, a reply's verdict and the command's dependencies.
func describeEPaxos(m *wire.EPaxos) string {
	if m.Kind == wire.EExecuted {
		return fmt.Sprintf("%s %v", m.Kind, m.Executed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", m.Kind, m.Instance)
	if m.Ballot != 0 {
		fmt.Fprintf(&b, " ballot %d.%d", m.Ballot>>8, m.Ballot&0xff)
	}
	switch m.Kind {
	case wire.EPreAcceptReply, wire.EAcceptReply, wire.EPrepareReply:
		if !m.Ok {
			fmt.Fprintf(&b, " refused, promised %d.%d", m.Promised>>8, m.Promised&0xff)
			return b.String()
		}
	}
	if m.Kind == wire.EPrepareReply {
		fmt.Fprintf(&b, " %s", m.Status)
		if m.Status == wire.EAccepted || m.Status == wire.EPreAccepted {
			fmt.Fprintf(&b, " at %d.%d", m.AcceptedBallot>>8, m.AcceptedBallot&0xff)
		}
	}
	if m.Agreed {
		b.WriteString(" agreed")
	}
	switch {
	case m.Command.Noop:
		b.WriteString(" no-op")
	case len(m.Command.Ops) > 0:
		ops := make([]string, len(m.Command.Ops))
		for i := range m.Command.Ops {
			ops[i] = describeOp(m.Command.Ops[i].ID, &m.Command.Ops[i])
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(ops, ", "))
	}
	if m.Kind != wire.EPrepare && m.Kind != wire.EAcceptReply {
		deps := make([]string, len(m.Deps))
		for i, d := range m.Deps {
			deps[i] = d.String()
		}
		fmt.Fprintf(&b, " deps {%s}", strings.Join(deps, " "))
	}
	return b.String()
}
