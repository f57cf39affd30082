//go:build !race

package advice

// seeds is the number of seeds of the truth matrix; the second runs the
// vLLM group alone.
const seeds = 2
