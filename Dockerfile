# The inferbench container image: the binary only, on a minimal base, as a non-root user.
# Build: docker build --build-arg INFERBENCH_GIT_COMMIT="$(git rev-parse HEAD)" -t inferbench .
# Run:   docker run --rm --network host inferbench profile --url http://127.0.0.1:8000 ...

# ---- build: the release binary from this checkout (Cargo.lock pinned)
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# .git is not copied (see .dockerignore): the commit comes in as a build argument.
ARG INFERBENCH_GIT_COMMIT=unknown
ENV INFERBENCH_GIT_COMMIT=${INFERBENCH_GIT_COMMIT}
COPY . .
RUN cargo build --release --locked -p inferbench --bin inferbench \
    && install -D -m 0755 target/release/inferbench /out/inferbench

# ---- final: glibc and libgcc only (the binary links nothing else), no shell, no package
# manager, uid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/inferbench /usr/local/bin/inferbench
# Numeric, so that Kubernetes runAsNonRoot can check it (distroless nonroot = 65532).
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/inferbench"]
CMD ["--help"]
