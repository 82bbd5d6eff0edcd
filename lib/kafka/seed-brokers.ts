import type { ISocketFactory } from 'kafkajs'
import { guardedSocketFactory } from './frame-guard.js'
import { defaultSocketFactory } from './kafkajs-internals.js'

/** A bracketed IPv6 literal with its port: `[::1]:9092`. */
const IPV6_SEED = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/
/** The stand-ins' domain: `.invalid` never resolves, so a stand-in cannot reach another host by accident. */
const STAND_IN_DOMAIN = 'ipv6.squeeze.invalid'

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
    const literal = IPV6_SEED.exec(broker)
    if (literal === null) return broker
    const standIn = `seed-${addresses.size}.${STAND_IN_DOMAIN}`
    addresses.set(standIn, literal[1] as string)
    return `${standIn}:${literal[2] as string}`
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
