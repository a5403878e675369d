package runtime

// ExitReasoner is an Instance that can say why it ended, once Done is
// closed: "the sandbox's Pod was evicted: ...", say. The manager shows and
// audits the reason instead of its generic one.
type ExitReasoner interface {
	ExitReason() string
}
