//go:build norecord

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
)

// kubeDiscovery refuses kubernetes_sd: this build leaves client-go out.
func kubeDiscovery(cfg *config.Config, _ *slog.Logger) (func(context.Context, func([]config.Target)), error) {
	if cfg.KubernetesSD == nil {
		return nil, nil
	}
	return nil, cli.Usage(fmt.Errorf("%s: kubernetes_sd: this build leaves Kubernetes discovery out (-tags norecord)", cfg.KubernetesSD.At("")))
}
