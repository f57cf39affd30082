package config

import (
	"flag"
	"strings"
)

// Flags binds command-line flags to the fields of a Config, the way
// Prometheus binds its flags into its configuration: each flag is defined
// once, with the field it sets. The file named by -config is read after
// the flags are parsed, so the flags given are kept and applied over it
// (flags win over the file).
//
// Durations and thresholds given on the command line are validated like
// the file's, and their errors name the flag ("-timeout: timeout -1s must
// be > 0"). Strings and counts keep the file's value when the flag is
// empty or zero, as a flag left at its default does.
type Flags struct {
	fs    *flag.FlagSet
	binds []binding // in the order defined, which is the order applied
}

// binding is what one flag, when given, does to a Config.
type binding struct {
	flag string
	set  func(*Config)
}

// NewFlags binds flags defined on fs.
func NewFlags(fs *flag.FlagSet) *Flags { return &Flags{fs: fs} }

// Bind makes a flag already defined on the FlagSet set c with set when it
// is given on the command line.
func (f *Flags) Bind(name string, set func(c *Config)) {
	f.binds = append(f.binds, binding{name, set})
}

// Given reports whether flag name was given on the command line.
func (f *Flags) Given(name string) bool {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

// Apply sets on c every bound flag given on the command line.
func (f *Flags) Apply(c *Config) {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, b := range f.binds {
		if given[b.flag] {
			b.set(c)
		}
	}
}

// Duration defines a duration flag that sets the setting key (interval,
// timeout, window, history) through field.
func (f *Flags) Duration(name, key, usage string, field func(*Config) *Duration) {
	v := f.fs.Duration(name, 0, usage)
	f.Bind(name, func(c *Config) {
		field(c).Duration = *v
		c.mark(key, "-"+name)
	})
}

// Float64 defines a number flag that sets the setting key (slo.ttft, …)
// through field.
func (f *Flags) Float64(name, key, usage string, field func(*Config) *float64) {
	v := f.fs.Float64(name, 0, usage)
	f.Bind(name, func(c *Config) {
		*field(c) = *v
		c.mark(key, "-"+name)
	})
}

// OptionalFloat64 is Float64 for a setting that is nil until given
// (headroom).
func (f *Flags) OptionalFloat64(name, key, usage string, field func(*Config) **float64) {
	v := f.fs.Float64(name, 0, usage)
	f.Bind(name, func(c *Config) {
		x := *v
		*field(c) = &x
		c.mark(key, "-"+name)
	})
}

// String defines a string flag that sets field when not empty, and
// returns the flag's value.
func (f *Flags) String(name, usage string, field func(*Config) *string) *string {
	v := f.fs.String(name, "", usage)
	f.StringVar(v, name, field)
	return v
}

// StringVar binds a string flag already defined (e.g. one checked while
// parsing) whose value is at v.
func (f *Flags) StringVar(v *string, name string, field func(*Config) *string) {
	f.Bind(name, func(c *Config) {
		if *v != "" {
			*field(c) = *v
		}
	})
}

// List defines a flag of comma-separated values that sets field when not
// empty.
func (f *Flags) List(name, usage string, field func(*Config) *[]string) {
	v := f.fs.String(name, "", usage)
	f.Bind(name, func(c *Config) {
		if *v != "" {
			*field(c) = strings.Split(*v, ",")
		}
	})
}

// Int defines a count flag that sets field when not zero, and returns the
// flag's value.
func (f *Flags) Int(name, usage string, field func(*Config) *int) *int {
	v := f.fs.Int(name, 0, usage)
	f.Bind(name, func(c *Config) {
		if *v != 0 {
			*field(c) = *v
		}
	})
	return v
}

// Int64 is Int for 64-bit settings (bytes).
func (f *Flags) Int64(name, usage string, field func(*Config) *int64) *int64 {
	v := f.fs.Int64(name, 0, usage)
	f.Bind(name, func(c *Config) {
		if *v != 0 {
			*field(c) = *v
		}
	})
	return v
}
