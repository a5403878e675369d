// Package kernel runs stateful code interpreters — contexts — for the
// guest agent: Python on Debian's ipykernel (driven over the Jupyter
// protocol by package jupyter), JavaScript and TypeScript on Node through a
// small driver over Node's repl/vm modules embedded in the binary, and
// bash as one persistent shell per context.
//
// A Supervisor owns the contexts of one sandbox. Each context keeps its
// state (variables, imports, working directory) between cells; cells sent
// to one context at once run one after another in arrival order. A kernel
// that dies is reported with the cell it died in, and the next cell starts
// a new kernel and says, in its start event, that the state was lost.
//
// The supervisor starts processes only through a Starter, so that the
// guest agent can run kernels as sandbox workloads (its spawner thread,
// cgroups and hardening); ExecStarter is the plain os/exec one used on a
// host and in tests.
package kernel
