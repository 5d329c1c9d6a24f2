# The schedlock container image, built by goreleaser (.goreleaser.yaml,
# dockers_v2): FROM scratch, the static binary and a CA bundle for TLS
# DSNs, nothing else — no shell, no libc. goreleaser lays the build
# context out as $TARGETPLATFORM/schedlock (linux/amd64/schedlock, …) and
# etc/ssl/certs/ca-certificates.crt (extra_files); a plain `docker build .`
# in the repository has neither. docs/install.md shows how to use it.
FROM scratch
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/schedlock /usr/bin/schedlock
COPY etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# nobody: the image needs no privilege. selfcheck without a DSN writes an
# SQLite file to $XDG_CACHE_HOME, which a writable mount provides.
USER 65534:65534
ENTRYPOINT ["/usr/bin/schedlock"]
