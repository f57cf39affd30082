//go:build !norecord

package main

import (
	"context"
	"log/slog"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kubesd"
)

// kubeDiscovery is serve's kubernetes_sd, nil without one. The lean build
// (-tags norecord) leaves client-go out and refuses the section.
func kubeDiscovery(cfg *config.Config, log *slog.Logger) (func(context.Context, func([]config.Target)), error) {
	sd := cfg.KubernetesSD
	if sd == nil {
		return nil, nil
	}
	if err := kubesd.Validate(sd); err != nil {
		return nil, cli.Usage(err)
	}
	client, namespaces, err := kubesd.Client(sd)
	if err != nil {
		return nil, cli.Usage(err)
	}
	return func(ctx context.Context, update func([]config.Target)) {
		kubesd.Watch(ctx, sd, client, namespaces, update, log)
	}, nil
}
