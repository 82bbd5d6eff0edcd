# Sourced (no process of its own) by bin/squeeze and bin/squeeze-node: sets squeeze_node_flags, the V8 flags
# squeeze's processes start with. A flag that NODE_OPTIONS sets is left to it.
#
# --v8-pool-size=1 on one or two cores: V8 compiles hot code and collects garbage on a pool of background threads,
# 4 by default. On one or two cores those threads outnumber the cores left beside the event loop and a compression
# thread, and take turns with the event loop while a run warms up.
#
# --max-semi-space-size=8 (MB): V8 grows its young generation to larger semi-spaces by default, and every page it
# grows into is a fresh page the kernel must fault in; a smaller young generation faults far fewer. `audit` takes 2:
# it reads topic after topic, and a young generation grown with that allocation rate is most of its peak memory,
# which small scavenges serve as well. The command is the first argument (bin/squeeze) or the second, after the
# script (bin/squeeze-node).
# The figures behind both: docs/design.md, "V8 flags".
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
  *)
    semi_space_mb=8
    if [ "${1-}" = audit ] || [ "${2-}" = audit ]; then semi_space_mb=2; fi
    squeeze_node_flags="$squeeze_node_flags --max-semi-space-size=$semi_space_mb"
    ;;
esac
