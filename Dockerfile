# syntax=docker/dockerfile:1
# One image for every service: `docker run squeeze produce|copy|consume|compare ...`.
# zstd-napi and squeeze's lz4 (native/squeeze-lz4) are N-API addons compiled from source here, for this image's Node and libc;
# snappy comes as a prebuilt napi binary through its optional dependency.

# The full image has python3, make and g++ for node-gyp, so the build needs no apt (and no network but npm's).
ARG BUILD_IMAGE=node:24-bookworm
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${BUILD_IMAGE} AS toolchain
WORKDIR /app
# node-gyp uses the headers that ship in the Node image instead of downloading them (npm_package_config_node_gyp_*
# is node-gyp's own prefix; npm 11 warns that unknown npm_config_* settings stop working in its next major).
# prebuild-install (zstd-napi) builds from source rather than fetching a binary: .prebuild-installrc says so.
ENV npm_package_config_node_gyp_nodedir=/usr/local \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

FROM toolchain AS build
COPY package.json package-lock.json .prebuild-installrc ./
# squeeze's own N-API lz4 addon: a file: dependency that npm ci links and builds in place.
COPY native native
RUN npm ci
COPY tsconfig.json ./
COPY lib lib
COPY services services
COPY bench bench
COPY test test
COPY schema schema
COPY tools tools
RUN npx tsc -p tsconfig.json && rm -rf dist/test

FROM toolchain AS prod-deps
COPY package.json package-lock.json .prebuild-installrc ./
COPY native native
RUN npm ci --omit=dev && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
# node_modules/squeeze-lz4 links here; only its built addon and loader are needed at run time.
COPY --from=prod-deps /app/native/squeeze-lz4/package.json /app/native/squeeze-lz4/index.cjs ./native/squeeze-lz4/
COPY --from=prod-deps /app/native/squeeze-lz4/build/Release/squeeze_lz4.node ./native/squeeze-lz4/build/Release/
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY package.json ./
COPY schema ./schema
# uid 1000 is the image's `node` user; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
# /metrics, /healthz, /readyz when a service runs with --metrics-port 9464 --metrics-host 0.0.0.0
EXPOSE 9464
ENTRYPOINT ["/app/bin/squeeze"]
CMD ["--help"]
