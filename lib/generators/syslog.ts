import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { rfc3164Time } from './time-format.js'
import { WORDS } from './vocab.js'

/**
 * rsyslog RFC 3164 lines from one host: mostly kernel ring-buffer lines (with the kernel's own
 * uptime stamp) plus a handful of daemons, each with a stable pid and a small message repertoire.
 */

type Template = (r: Rng, uptime: string) => string

const KERNEL: readonly Template[] = [
  (r, u) =>
    `[${u}] wlan0: ${r.pick(['associated', 'deauthenticating from', 'authenticate with'])} ${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}`,
  (r, u) =>
    `[${u}] usb 1-1: ${r.pick(['new high-speed USB device number', 'USB disconnect, device number'])} ${r.range(2, 9)}`,
  (_r, u) => `[${u}] IPv6: ADDRCONF(NETDEV_UP): wlan0: link is not ready`,
  (r, u) => `[${u}] EXT4-fs (mmcblk0p${r.range(1, 9)}): mounted filesystem with ordered data mode. Opts: (null)`,
  (r, u) =>
    `[${u}] audit: type=1400 audit(${r.range(1400000000, 1500000000)}.${r.range(100, 999)}:${r.range(2, 900)}): apparmor="DENIED" operation="open" profile="${r.pick(WORDS)}" name="/proc/${r.range(1, 3000)}/status" pid=${r.range(300, 3000)} comm="${r.pick(WORDS)}" requested_mask="r" denied_mask="r" fsuid=32011 ouid=0`,
  (r, u) =>
    `[${u}] healthd: battery l=${r.range(5, 100)} v=${r.range(3500, 4300)} t=${r.range(200, 400)}.0 h=2 st=${r.range(2, 3)} chg=u`,
  (r, u) =>
    `[${u}] binder: ${r.range(300, 3000)}:${r.range(300, 3000)} transaction failed 29189, size ${r.range(0, 400)}-${r.range(0, 16)}`
]

const DAEMONS: ReadonlyArray<readonly [string, readonly Template[]]> = [
  [
    'NetworkManager',
    [
      (r) =>
        `<info> (wlan0): supplicant interface state: ${r.pick(['scanning', 'associating', 'completed', 'disconnected'])}`,
      () => "<info> Policy set 'ubuntu' (wlan0) as default for IPv4 routing and DNS."
    ]
  ],
  [
    'ofonod',
    [
      (r) =>
        `${r.pick(['ril_radio_settings_probe', 'ril_gprs_context_probe', 'sim_state_watch'])}: ${r.pick(['OK', 'Error', 'probe done'])}`
    ]
  ],
  [
    'powerd',
    [(r) => `${r.pick(['Screen', 'Proximity', 'Display'])} ${r.pick(['on', 'off'])} request ${r.range(1, 90)}`]
  ],
  [
    'dbus',
    [
      (r) =>
        `[system] Activating service name='org.freedesktop.${r.pick(['hostname1', 'UPower', 'Accounts'])}' (using servicehelper)`
    ]
  ]
]

export function createSyslogGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const host = `${rng.pick(WORDS)}-${rng.pick(['phone', 'box', 'node', 'pi'])}`
  const kernel = new ZipfPicker(KERNEL, 1.0)
  const daemons = new ZipfPicker(
    DAEMONS.map(([name, t]) => ({ name, pid: rng.range(300, 4000), templates: new ZipfPicker(t, 1.0) })),
    1.0
  )
  let nowMs = startTime(opts)
  const bootMs = nowMs - rng.range(5, 600) * 1000
  const step = timeStep(opts)
  return {
    next() {
      nowMs = step(nowMs, rng.chance(0.8) ? rng.int(200) : Math.floor(rng.exp(20_000)))
      const time = rfc3164Time(nowMs)
      let line: string
      if (rng.chance(0.85)) {
        const up = (nowMs - bootMs) / 1000 + rng.int(1000) / 1e6
        line = `${time} ${host} kernel: ${kernel.pick(rng)(rng, up.toFixed(6).padStart(12, ' '))}`
      } else {
        const d = daemons.pick(rng)
        line = `${time} ${host} ${d.name}[${d.pid}]: ${d.templates.pick(rng)(rng, '')}`
      }
      return { key: null, value: Buffer.from(line), timestampMs: nowMs }
    }
  }
}
