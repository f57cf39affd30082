package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// instances serves /api/v1/instances: the newest point's instances,
// classified, grouped, filtered, sorted and paged by RankInstances. Only the
// page's rows are encoded, so a fleet of thousands costs a client what it
// shows.
func (s *Server) instances(w http.ResponseWriter, r *http.Request) {
	q, err := ParseInstanceQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cfg := s.Ledger.Config()
	var pp *ledger.Point
	if p, ok := s.Ledger.Latest(); ok {
		pp = &p
	}
	t := RankInstances(pp, s.Ledger.Meta(), cfg.Window.Seconds(), q)
	for i := range t.Rows {
		row := &t.Rows[i]
		vals, why, err := instanceValues(row.Point)
		if err != nil {
			s.fail(w, "encode instance "+row.Name, err)
			return
		}
		row.Values = vals
		for k, v := range why {
			if row.Reasons == nil {
				row.Reasons = map[string]string{}
			}
			row.Reasons[k] = v
		}
	}
	b, err := json.Marshal(t)
	if err != nil {
		s.fail(w, "encode instances", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	out, finish := s.compressed(w, r)
	_, _ = out.Write(append(b, '\n')) // a client that left has no one to hear of it
	finish()
}

// instanceValues is ip as the snapshot encodes it, with its "absent"
// object taken out and returned as the reasons.
func instanceValues(ip *ledger.InstancePoint) (jsonRaw, map[string]string, error) {
	b, err := json.Marshal(ip)
	if err != nil {
		return nil, nil, err
	}
	// The "absent" object is the encoding's last key, and its key cannot
	// appear unescaped inside a string before it.
	key := []byte(`,"absent":`)
	i := bytes.LastIndex(b, key)
	if i < 0 {
		return b, nil, nil
	}
	var why map[string]string
	if err := json.Unmarshal(b[i+len(key):len(b)-1], &why); err != nil {
		return nil, nil, fmt.Errorf("read the absent values' reasons: %w", err)
	}
	return append(b[:i:i], '}'), why, nil
}

// compressed returns the writer of the response body, gzip-compressed when
// the client accepts it, and the function that finishes the body.
func (s *Server) compressed(w http.ResponseWriter, r *http.Request) (io.Writer, func()) {
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		return w, func() {}
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	return zw, func() {
		if err := zw.Close(); err != nil {
			s.log().Debug("finish gzip response", "err", err)
		}
	}
}

// instancePick is what ?instances= and ?target= of the stream and the
// series keep of each point's instances: all, none or one.
type instancePick struct {
	none bool
	only string
}

// parsePick reads ?instances=0 and ?target=NAME; a target the ledger does
// not know is an error.
func (s *Server) parsePick(q url.Values) (instancePick, int, error) {
	p := instancePick{none: q.Get("instances") == "0", only: q.Get("target")}
	if !q.Has("target") {
		return p, 0, nil
	}
	if p.none {
		return p, http.StatusBadRequest, fmt.Errorf("instances=0 and target=%q: ask for one instance or none", p.only)
	}
	if _, ok := s.Ledger.Meta()[p.only]; !ok {
		return p, http.StatusNotFound, fmt.Errorf("target=%q: no such target", p.only)
	}
	return p, 0, nil
}

// detail is the pick as the ledger's history reads it: the instances left
// out are not rebuilt from its columns.
func (p instancePick) detail() ledger.Detail {
	return ledger.Detail{None: p.none, Target: p.only}
}

// apply returns the instances of ins to send. The one picked shares ins'
// storage: points are read-only.
func (p instancePick) apply(ins []ledger.InstancePoint) []ledger.InstancePoint {
	switch {
	case p.none:
		return nil
	case p.only == "":
		return ins
	}
	for i := range ins {
		if ins[i].Target == p.only {
			return ins[i : i+1 : i+1]
		}
	}
	return nil
}
