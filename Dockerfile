# hookbox serve as a container image.
#
#   docker build -t hookbox:0.1.0 .
#   docker run --read-only -p 127.0.0.1:7433:7433 \
#     -v "$PWD/tenants:/srv/hookbox/tenants:ro" \
#     -v hookbox-cache:/var/cache/hookbox -v hookbox-state:/var/lib/hookbox \
#     hookbox:0.1.0
#
# Two stages: a Rust 1.95 toolchain builds the release binary without the default `tools`
# feature (no `demo`, no `bench`, none of the example guests they carry, so no wasm32-wasip2
# target and no guest compiles in the image build); the runtime stage is
# distroless (glibc and libgcc, no shell, no package manager) running as the unprivileged
# `nonroot` user. Everything the server writes goes to two volumes — the compiled-component
# cache and the tenants' state (plugin data, replay files) — so the root filesystem can be
# mounted read-only. The tenants folder is mounted read-only too: a tenant's hooks must never be
# able to rewrite a tenant.toml. TLS is terminated in front of the container (an ingress or a
# proxy): the server speaks plain HTTP.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --no-default-features --bin hookbox \
 && install -D -m 0755 target/release/hookbox /out/hookbox \
 && mkdir -p /out/empty

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/hookbox /usr/local/bin/hookbox
COPY deploy/serve.toml /etc/hookbox/serve.toml
# The volumes' mount points exist and belong to `nonroot` (uid 65532), so an empty named volume
# is writable by the server.
COPY --from=build --chown=65532:65532 /out/empty/ /var/cache/hookbox/
COPY --from=build --chown=65532:65532 /out/empty/ /var/lib/hookbox/
VOLUME ["/var/cache/hookbox", "/var/lib/hookbox"]
USER 65532:65532
EXPOSE 7433
ENTRYPOINT ["/usr/local/bin/hookbox"]
CMD ["serve", "--config", "/etc/hookbox/serve.toml"]
