//go:build !norecord

package record

// Included says this build writes and reads recordings (see ErrLeftOut).
const Included = true
