# Sourced (no process of its own) by bin/squeeze and bin/squeeze-node: sets squeeze_node_flags, the V8 flags
# squeeze's processes start with. A flag that NODE_OPTIONS sets is left to it.
#
# --v8-pool-size=1 on one or two cores: V8 compiles hot code and collects garbage on a pool of background threads,
# 4 by default. On one or two cores those threads outnumber the cores left beside the event loop and a compression
# thread, and take turns with the event loop while a run warms up. With one, `produce --source file` of the
# 200,000-line access log took 4-8% less wall time on the 2-core bench machine (docs/benchmarks.md; within the noise
# in the runs of 2026-12-01, with the cap below in both arms).
#
# --max-semi-space-size=8 (MB): V8's young generation grows here to 16 MB semi-spaces by default, and every page
# it grows into is a fresh page the kernel must fault in (~2.4 ms of CPU per MiB on the bench machine). The
# library producer's second pass of 200,000 records still faulted 1.7-7k pages that way at 16 or 32 MB, and took
# 0.15-0.30 s; at 8 MB, 0-1,200 pages and 0.10-0.16 s (docs/benchmarks.md, "A smaller young generation").
squeeze_node_flags=
case " ${NODE_OPTIONS-} " in
  *" --v8-pool-size"*) ;;
  *)
    online=
    read -r online < /sys/devices/system/cpu/online 2>/dev/null || true
    # Cores online, as the kernel lists them: "0" or "0-1" is one or two.
    case $online in 0 | 0-1) squeeze_node_flags=--v8-pool-size=1 ;; esac
    ;;
esac
case " ${NODE_OPTIONS-} " in
  *" --max-semi-space-size"*) ;;
  *) squeeze_node_flags="$squeeze_node_flags --max-semi-space-size=8" ;;
esac
