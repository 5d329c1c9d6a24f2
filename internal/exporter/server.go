package exporter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/schedlock/schedlock/internal/webconfig"
)

// Handler serves /metrics (the exporter's metrics, the Go runtime's and
// the process's), /healthz ("ok" while the process serves; the databases'
// health is schedlock_up) and the status page at /.
func (e *Exporter) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogErrorLog{e.opts.Logger}, ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /{$}", e.statusPage())
	return mux
}

// healthz answers "ok" while the process serves.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// slogErrorLog lets promhttp log through slog.
type slogErrorLog struct{ l *slog.Logger }

func (s slogErrorLog) Println(v ...any) { s.l.Error("serving metrics failed", "err", v) }

// ShutdownGrace bounds how long Serve waits for requests in flight once
// its context ends.
const ShutdownGrace = 15 * time.Second

// Serve serves e.Handler on l (behind web's basic auth, but for /healthz)
// until ctx ends, then shuts down gracefully:
// no new connections, requests in flight finished (within
// ShutdownGrace), the databases' connections closed. web is the loaded
// web configuration (TLS, basic auth; nil: plain HTTP). It returns nil
// after a shutdown that ctx asked for.
func (e *Exporter) Serve(ctx context.Context, l net.Listener, web *webconfig.Config) error {
	// /healthz answers without a password, for liveness probes: it tells
	// nothing but that the process serves.
	mux := http.NewServeMux()
	mux.Handle("/", web.Wrap(e.Handler()))
	mux.HandleFunc("GET /healthz", healthz)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := web.Configure(srv); err != nil {
		return err
	}
	tlsConfig := srv.TLSConfig
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	e.opts.Logger.Info("serving", "url", scheme+"://"+l.Addr().String()+"/", "basic_auth", web != nil && len(web.BasicAuthUsers) > 0)
	done := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			done <- srv.ServeTLS(l, "", "")
			return
		}
		done <- srv.Serve(l)
	}()
	select {
	case err := <-done:
		_ = e.Close()
		return err
	case <-ctx.Done():
	}
	e.opts.Logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, e.Close())
}
