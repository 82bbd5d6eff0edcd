import type { ISocketFactory } from 'kafkajs'
import { guardedSocketFactory } from './frame-guard.js'
import { defaultSocketFactory } from './kafkajs-internals.js'

/** `host:port`, or a bracketed IPv6 literal with its port (`[::1]:9092`). */
const BROKER_ADDRESS = /^(?:([^\s:[\]]+)|\[([0-9a-fA-F:.]+)\]):(\d{1,5})$/
/** The stand-ins' domain: `.invalid` never resolves, so a stand-in cannot reach another host by accident. */
const STAND_IN_DOMAIN = 'ipv6.squeeze.invalid'

/** A broker address's host (an IPv6 literal without its brackets) and port; undefined for any other form. */
export function splitBrokerAddress(broker: string): { host: string; port: number } | undefined {
  const m = BROKER_ADDRESS.exec(broker)
  return m === null ? undefined : { host: m[1] ?? (m[2] as string), port: Number(m[3]) }
}

/** The seed brokers as kafkajs takes them, and the socket factory that reaches each one. */
export interface SeedBrokers {
  readonly seeds: string[]
  readonly socketFactory: ISocketFactory
}

/**
 * kafkajs reads a seed broker as the host and port on either side of its first ':', which an IPv6 literal
 * (`[::1]:9092`) cannot pass: such a seed goes to kafkajs as a stand-in name, which the socket factory maps back to
 * the address (brokers the cluster's metadata names come as a host and a port, and need none). Every socket's
 * responses are checked by the frame guard, which names the address connected to.
 */
export function seedBrokers(brokers: readonly string[]): SeedBrokers {
  const addresses = new Map<string, string>()
  const seeds = brokers.map((broker) => {
    const address = splitBrokerAddress(broker)
    if (address === undefined || !address.host.includes(':')) return broker
    const standIn = `seed-${addresses.size}.${STAND_IN_DOMAIN}`
    addresses.set(standIn, address.host)
    return `${standIn}:${address.port}`
  })
  const guarded = guardedSocketFactory(defaultSocketFactory())
  return {
    seeds,
    socketFactory:
      addresses.size === 0
        ? guarded
        : (options) => guarded({ ...options, host: addresses.get(options.host) ?? options.host })
  }
}
