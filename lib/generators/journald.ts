import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { rfc3164Time } from './time-format.js'
import { WORDS } from './vocab.js'

/**
 * `journalctl -o json` entries from one machine and boot. Each entry carries the trusted fields
 * journald attaches to its source (kernel, PID 1, audit, or a daemon with its pid, unit, cgroup,
 * cmdline...) plus the message; the same few sources produce most entries, which is the
 * redundancy real journals have. Key order is shuffled per entry because journalctl prints keys
 * in hash-table order, which differs from entry to entry.
 */

type Fields = Record<string, string>

interface Daemon {
  ident: string
  transport: 'journal' | 'syslog' | 'stdout'
  fields: Fields
  messages: ZipfPicker<(rng: Rng) => string>
}

const UNITS = [
  ['systemd-journald.service', 'Journal Service'],
  ['NetworkManager.service', 'Network Manager'],
  ['sshd.service', 'OpenSSH server daemon'],
  ['chronyd.service', 'NTP client/server'],
  ['dbus-broker.service', 'D-Bus System Message Bus'],
  ['systemd-logind.service', 'User Login Management'],
  ['systemd-udevd.service', 'Rule-based Manager for Device Events and Files'],
  ['systemd-tmpfiles-clean.service', 'Cleanup of Temporary Directories'],
  ['dnf-makecache.service', 'dnf makecache'],
  ['packagekit.service', 'PackageKit Daemon'],
  ['fwupd-refresh.service', 'Refresh fwupd metadata and update motd'],
  ['logrotate.service', 'Rotate log files'],
  ['systemd-hostnamed.service', 'Hostname Service'],
  ['polkit.service', 'Authorization Manager'],
  ['bluetooth.service', 'Bluetooth service'],
  ['avahi-daemon.service', 'Avahi mDNS/DNS-SD Stack'],
  ['cups.service', 'CUPS Scheduler'],
  ['user@1000.service', 'User Manager for UID 1000'],
  ['systemd-resolved.service', 'Network Name Resolution'],
  ['rtkit-daemon.service', 'RealtimeKit Scheduling Policy Service'],
  ['upower.service', 'Daemon for power management'],
  ['modprobe@fuse.service', 'Load Kernel Module fuse'],
  ['systemd-timedated.service', 'Time & Date Service'],
  ['raid-check.timer', 'Weekly RAID setup health check'],
  ['unbound-anchor.timer', 'daily update of the root trust anchor for DNSSEC']
] as const

const KERNEL_MESSAGES: ReadonlyArray<(r: Rng) => string> = [
  (r) =>
    `audit: type=1334 audit(${r.range(1600000000, 1700000000)}.${r.range(100, 999)}:${r.range(50, 900)}): prog-id=${r.range(10, 120)} op=${r.pick(['LOAD', 'UNLOAD'])}`,
  (r) => `usb 1-1.${r.range(1, 4)}: new high-speed USB device number ${r.range(2, 12)} using xhci_hcd`,
  (r) => `usb 1-1.${r.range(1, 4)}: USB disconnect, device number ${r.range(2, 12)}`,
  () => 'IPv6: ADDRCONF(NETDEV_CHANGE): wlan0: link becomes ready',
  () => 'brcmfmac: brcmf_cfg80211_set_power_mgmt: power save enabled',
  (r) => `wlan0: authenticate with ${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}:${r.hex(2)}`,
  () => 'EXT4-fs (mmcblk0p3): re-mounted. Quota mode: none.',
  (r) => `systemd-journald[${r.range(400, 700)}]: Received client request to flush runtime journal.`,
  () => 'hdmi-audio-codec hdmi-audio-codec.1.auto: ASoC: error at snd_soc_dai_startup on i2s-hifi: -19',
  () => "Bluetooth: hci0: BCM: firmware Patch file not found, tried: 'brcm/BCM4345C0.raspberrypi,4-model-b.hcd'",
  () => 'vc4-drm gpu: [drm] Cannot find any crtc or sizes',
  (r) => `SELinux:  Context system_u:object_r:${r.pick(WORDS)}_t:s0 became valid (mapped).`,
  (r) =>
    `TCP: request_sock_TCP: Possible SYN flooding on port ${r.pick([22, 80, 443])}. Sending cookies.  Check SNMP counters.`,
  (r) =>
    `Out of memory: Killed process ${r.range(1000, 30000)} (${r.pick(['java', 'node', 'python3', 'chrome'])}) total-vm:${r.range(100000, 9000000)}kB, anon-rss:${r.range(10000, 900000)}kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:${r.range(100, 9000)}kB oom_score_adj:0`
]

type AuditType = readonly [name: string, code: string]
/** Audit record types with relative frequency: unit start/stop and BPF loads dominate a quiet host. */
const AUDIT_TYPES: ReadonlyArray<readonly [AuditType, number]> = [
  [['SERVICE_START', '1130'], 4],
  [['SERVICE_STOP', '1131'], 2],
  [['BPF', '1334'], 3],
  [['USER_START', '1105'], 1],
  [['CRED_DISP', '1104'], 1]
]

function hex32(rng: Rng): string {
  return rng.hex(32)
}

export function createJournaldGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const machineId = hex32(rng)
  const bootId = hex32(rng)
  const seqnumId = hex32(rng)
  const hostname = rng.pick(['fedora', 'web-01', 'pi4', 'build-03', 'nas'])
  const startMs = startTime(opts)
  const step = timeStep(opts, 1000)
  const bootUs = startMs * 1000 - rng.range(60, 36000) * 1_000_000
  let nowUs = startMs * 1000
  let seq = rng.range(1, 5000)
  let jobId = rng.range(100, 3000)
  let auditId = rng.range(100, 3000)
  const invocation = new Map<string, string>()
  const units = new ZipfPicker(UNITS, 1.0)
  const kernel = new ZipfPicker(KERNEL_MESSAGES, 1.0)

  const daemon = (
    ident: string,
    transport: Daemon['transport'],
    unit: string,
    exe: string,
    cmdline: string,
    uid: string,
    context: string,
    messages: Array<(r: Rng) => string>
  ): Daemon => {
    const pid = String(rng.range(300, 4000))
    const fields: Fields = {
      _PID: pid,
      _UID: uid,
      _GID: uid,
      _COMM: exe.slice(exe.lastIndexOf('/') + 1).slice(0, 15),
      _EXE: exe,
      _CMDLINE: cmdline,
      _CAP_EFFECTIVE: uid === '0' ? rng.pick(['1ffffffffff', '3fffffffff', '1f7fdffffff']) : '0',
      _SELINUX_CONTEXT: `system_u:system_r:${context}:s0`,
      _SYSTEMD_CGROUP: `/system.slice/${unit}`,
      _SYSTEMD_UNIT: unit,
      _SYSTEMD_SLICE: 'system.slice',
      _SYSTEMD_INVOCATION_ID: hex32(rng)
    }
    if (transport === 'syslog') fields.SYSLOG_PID = pid
    if (transport === 'stdout') fields._STREAM_ID = hex32(rng)
    return { ident, transport, fields, messages: new ZipfPicker(messages, 1.0) }
  }

  const daemons = new ZipfPicker(
    [
      daemon(
        'NetworkManager',
        'journal',
        'NetworkManager.service',
        '/usr/sbin/NetworkManager',
        '/usr/sbin/NetworkManager --no-daemon',
        '0',
        'NetworkManager_t',
        [
          (r) =>
            `<info>  [${Math.floor(nowUs / 1e6)}.${r.range(1000, 9999)}] dhcp4 (wlan0): state changed new lease, address=192.168.1.${r.range(2, 250)}`,
          (r) =>
            `<info>  [${Math.floor(nowUs / 1e6)}.${r.range(1000, 9999)}] device (wlan0): supplicant interface state: ${r.pick(['scanning', 'associating', 'completed', 'disconnected'])}`,
          (r) =>
            `<info>  [${Math.floor(nowUs / 1e6)}.${r.range(1000, 9999)}] manager: NetworkManager state is now ${r.pick(['CONNECTED_GLOBAL', 'CONNECTING', 'CONNECTED_SITE'])}`
        ]
      ),
      daemon(
        'sshd',
        'syslog',
        'sshd.service',
        '/usr/sbin/sshd',
        'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups',
        '0',
        'sshd_t',
        [
          (r) =>
            `Connection closed by authenticating user root ${r.range(1, 223)}.${r.int(256)}.${r.int(256)}.${r.int(256)} port ${r.range(1024, 65535)} [preauth]`,
          (r) =>
            `Invalid user ${r.pick(['admin', 'test', 'oracle', 'ubuntu', 'git', 'postgres'])} from ${r.range(1, 223)}.${r.int(256)}.${r.int(256)}.${r.int(256)} port ${r.range(1024, 65535)}`,
          (r) =>
            `Accepted publickey for ${r.pick(['deploy', 'admin'])} from 10.0.${r.int(4)}.${r.range(2, 50)} port ${r.range(1024, 65535)} ssh2: ED25519 SHA256:${r.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 43)}`
        ]
      ),
      daemon(
        'bluetoothd',
        'syslog',
        'bluetooth.service',
        '/usr/libexec/bluetooth/bluetoothd',
        '/usr/libexec/bluetooth/bluetoothd',
        '0',
        'bluetooth_t',
        [
          () => 'src/plugin.c:plugin_init() System does not support csip plugin',
          () => 'Failed to set mode: Failed (0x03)',
          (r) =>
            `Endpoint registered: sender=:1.${r.range(20, 90)} path=/MediaEndpoint/A2DPSource/${r.pick(['sbc', 'aac', 'ldac'])}`
        ]
      ),
      daemon(
        'PackageKit',
        'syslog',
        'packagekit.service',
        '/usr/libexec/packagekitd',
        '/usr/libexec/packagekitd',
        '0',
        'rpm_t',
        [
          (r) =>
            `get-updates transaction /${r.range(1, 900)}_${r.hex(8)} from uid ${r.pick(['1000', '42'])} finished with success after ${r.range(5, 9000)}ms`,
          (r) =>
            `refresh-cache transaction /${r.range(1, 900)}_${r.hex(8)} from uid 1000 finished with success after ${r.range(500, 60000)}ms`
        ]
      ),
      daemon(
        'chronyd',
        'syslog',
        'chronyd.service',
        '/usr/sbin/chronyd',
        '/usr/sbin/chronyd -F 2',
        '994',
        'chronyd_t',
        [
          (r) =>
            `Selected source ${r.range(1, 223)}.${r.int(256)}.${r.int(256)}.${r.int(256)} (${r.range(0, 3)}.fedora.pool.ntp.org)`,
          (r) => `System clock wrong by ${r.range(1, 900)}.${r.range(100000, 999999)} seconds`
        ]
      ),
      daemon(
        'dbus-broker-launch',
        'journal',
        'dbus-broker.service',
        '/usr/bin/dbus-broker-launch',
        '/usr/bin/dbus-broker-launch --scope system --audit',
        '0',
        'system_dbusd_t',
        [
          (r) =>
            `Activating via systemd: service name='org.freedesktop.${r.pick(['hostname1', 'timedate1', 'PackageKit', 'fwupd', 'UPower'])}' unit='${units.pick(r)[0]}' requested by ':1.${r.range(1, 99)}' (uid=0 pid=${r.range(300, 4000)} comm="${r.pick(['gnome-shell', 'systemd', 'NetworkManager'])}")`,
          (r) =>
            `Successfully activated service 'org.freedesktop.${r.pick(['hostname1', 'timedate1', 'PackageKit', 'fwupd', 'UPower'])}'`
        ]
      ),
      daemon(
        'gnome-shell',
        'stdout',
        'session-2.scope',
        '/usr/bin/gnome-shell',
        '/usr/bin/gnome-shell',
        '1000',
        'xdm_t',
        [
          () => 'Window manager warning: Overwriting existing binding of keysym 31 with keysym 31 (keycode a).',
          (r) => `JS ERROR: TypeError: this._${r.pick(['actor', 'window', 'indicator'])} is null`,
          () =>
            'libinput error: client bug: timer event8 debounce short: scheduled expiry is in the past (-4ms), your system is too slow'
        ]
      )
    ],
    1.1
  )

  const cursor = (realUs: number, monoUs: number): string =>
    `s=${seqnumId};i=${seq.toString(16)};b=${bootId};m=${monoUs.toString(16)};t=${realUs.toString(16)};x=${rng.hex(16)}`

  const base = (transport: string, ident: string, priority: string, facility: string): Fields => {
    const monoUs = nowUs - bootUs
    seq++
    return {
      __CURSOR: cursor(nowUs, monoUs),
      __REALTIME_TIMESTAMP: String(nowUs),
      __MONOTONIC_TIMESTAMP: String(monoUs),
      _BOOT_ID: bootId,
      _MACHINE_ID: machineId,
      _HOSTNAME: hostname,
      _TRANSPORT: transport,
      PRIORITY: priority,
      SYSLOG_FACILITY: facility,
      SYSLOG_IDENTIFIER: ident
    }
  }

  const systemdEntry = (): Fields => {
    const [unit, description] = units.pick(rng)
    const kind = rng.weighted([
      ['starting', 3],
      ['started', 3],
      ['deactivated', 3],
      ['finished', 2],
      ['consumed', 1]
    ] as const)
    if (kind === 'starting' || !invocation.has(unit)) invocation.set(unit, hex32(rng))
    const e = base('journal', 'systemd', '6', '3')
    Object.assign(e, {
      _PID: '1',
      _UID: '0',
      _GID: '0',
      _COMM: 'systemd',
      _EXE: '/usr/lib/systemd/systemd',
      TID: '1',
      _CMDLINE: '/usr/lib/systemd/systemd rhgb --switched-root --system --deserialize 31',
      _CAP_EFFECTIVE: '1ffffffffff',
      _SELINUX_CONTEXT: 'system_u:system_r:init_t:s0',
      _SYSTEMD_CGROUP: '/init.scope',
      _SYSTEMD_UNIT: 'init.scope',
      _SYSTEMD_SLICE: '-.slice',
      _SOURCE_REALTIME_TIMESTAMP: String(nowUs - rng.range(20, 400)),
      UNIT: unit,
      INVOCATION_ID: invocation.get(unit) as string,
      CODE_FILE: 'src/core/job.c'
    })
    switch (kind) {
      case 'starting':
        Object.assign(e, {
          MESSAGE: `Starting ${unit} - ${description}...`,
          MESSAGE_ID: '7d4958e842da4a758f6c1cdc7b36dcc5',
          CODE_LINE: '557',
          CODE_FUNC: 'job_emit_start_message',
          JOB_ID: String(++jobId),
          JOB_TYPE: 'start'
        })
        break
      case 'started':
      case 'finished':
        Object.assign(e, {
          MESSAGE: `${kind === 'started' ? 'Started' : 'Finished'} ${unit} - ${description}.`,
          MESSAGE_ID: '39f53479d3a045ac8e11786248231fbf',
          CODE_LINE: '744',
          CODE_FUNC: 'job_emit_done_message',
          JOB_ID: String(jobId),
          JOB_TYPE: 'start',
          JOB_RESULT: 'done'
        })
        break
      case 'deactivated':
        Object.assign(e, {
          MESSAGE: `${unit}: Deactivated successfully.`,
          MESSAGE_ID: '7ad2d189f7e94e70a38c781354912448',
          CODE_FILE: 'src/core/unit.c',
          CODE_LINE: '5576',
          CODE_FUNC: 'unit_log_success'
        })
        break
      case 'consumed':
        Object.assign(e, {
          MESSAGE: `${unit}: Consumed ${rng.range(1, 60)}.${rng.range(100, 999)}s CPU time.`,
          MESSAGE_ID: 'ae8f7b866b0347b9af31fe1c80b127c0',
          CODE_FILE: 'src/core/unit.c',
          CODE_LINE: '2300',
          CODE_FUNC: 'unit_log_resources',
          CPU_USAGE_NSEC: String(rng.range(1, 60) * 1_000_000_000 + rng.range(0, 999) * 1_000_000)
        })
        break
    }
    return e
  }

  const auditEntry = (): Fields => {
    const [name, type] = rng.weighted(AUDIT_TYPES)
    const e = base('audit', 'audit', '6', '4')
    const id = String(++auditId)
    const srcUs = Math.floor(nowUs / 1000) * 1000
    Object.assign(e, {
      _AUDIT_TYPE: type,
      _AUDIT_TYPE_NAME: name,
      _AUDIT_ID: id,
      _SOURCE_REALTIME_TIMESTAMP: String(srcUs)
    })
    if (name === 'BPF') {
      const prog = String(rng.range(10, 200))
      const op = rng.pick(['LOAD', 'UNLOAD'])
      Object.assign(e, {
        MESSAGE: `BPF prog-id=${op === 'UNLOAD' ? '0' : prog} op=${op}`,
        _AUDIT_FIELD_PROG_ID: op === 'UNLOAD' ? '0' : prog,
        _AUDIT_FIELD_OP: op
      })
      return e
    }
    const unit = units.pick(rng)[0].replace(/\.service$|\.timer$/, '')
    Object.assign(e, {
      _PID: '1',
      _UID: '0',
      _AUDIT_SESSION: '4294967295',
      _AUDIT_LOGINUID: '4294967295',
      _SELINUX_CONTEXT: 'system_u:system_r:init_t:s0',
      AUDIT_FIELD_UNIT: unit,
      AUDIT_FIELD_COMM: 'systemd',
      AUDIT_FIELD_EXE: '/usr/lib/systemd/systemd',
      AUDIT_FIELD_HOSTNAME: '?',
      AUDIT_FIELD_ADDR: '?',
      AUDIT_FIELD_TERMINAL: '?',
      AUDIT_FIELD_RES: 'success',
      MESSAGE: `${name} pid=1 uid=0 auid=4294967295 ses=4294967295 subj=system_u:system_r:init_t:s0 msg='unit=${unit} comm="systemd" exe="/usr/lib/systemd/systemd" hostname=? addr=? terminal=? res=success'`
    })
    return e
  }

  const kernelEntry = (): Fields => {
    const e = base(
      'kernel',
      'kernel',
      rng.weighted([
        ['6', 8],
        ['4', 2],
        ['3', 1],
        ['5', 1]
      ] as const),
      '0'
    )
    e._SOURCE_MONOTONIC_TIMESTAMP = String(nowUs - bootUs - rng.range(50, 500))
    e.MESSAGE = kernel.pick(rng)(rng)
    if (e.MESSAGE.startsWith('usb '))
      Object.assign(e, {
        _KERNEL_SUBSYSTEM: 'usb',
        _KERNEL_DEVICE: `+usb:${e.MESSAGE.slice(4, e.MESSAGE.indexOf(':'))}`,
        _UDEV_SYSNAME: e.MESSAGE.slice(4, e.MESSAGE.indexOf(':'))
      })
    return e
  }

  const daemonEntry = (): Fields => {
    const d = daemons.pick(rng)
    const e = base(
      d.transport,
      d.ident,
      rng.weighted([
        ['6', 6],
        ['5', 1],
        ['4', 2],
        ['3', 1]
      ] as const),
      d.transport === 'syslog' ? rng.pick(['3', '4', '10']) : '3'
    )
    Object.assign(e, d.fields)
    e.MESSAGE = d.messages.pick(rng)(rng)
    if (d.transport === 'syslog') {
      e.SYSLOG_TIMESTAMP = `${rfc3164Time(Math.floor(nowUs / 1000))} `
      e._SOURCE_REALTIME_TIMESTAMP = String(nowUs - rng.range(20, 300))
    }
    return e
  }

  return {
    next() {
      // Journals are bursty: a unit start logs several entries within milliseconds, then quiet.
      nowUs = step(nowUs, rng.chance(0.7) ? rng.range(50, 30_000) : Math.floor(rng.exp(8_000_000)))
      const kind = rng.weighted([
        ['kernel', 32],
        ['systemd', 32],
        ['audit', 15],
        ['daemon', 21]
      ] as const)
      const entry =
        kind === 'kernel'
          ? kernelEntry()
          : kind === 'systemd'
            ? systemdEntry()
            : kind === 'audit'
              ? auditEntry()
              : daemonEntry()
      const keys = rng.shuffle(Object.keys(entry))
      const ordered: Fields = {}
      for (const k of keys) ordered[k] = entry[k] as string
      return { key: null, value: Buffer.from(JSON.stringify(ordered)), timestampMs: Math.floor(nowUs / 1000) }
    }
  }
}
