//go:build !race

package advice

const seeds = 2
