//go:build race

package advice

// Under the race detector the real exposition parser is about twenty times
// slower; the truth matrix then runs one seed instead of two.
const seeds = 1
