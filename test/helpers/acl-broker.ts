import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Admin } from 'kafkajs'
import {
  killEmbeddedBrokersOnExit,
  startKraftBroker,
  type EmbeddedBroker
} from '../../lib/embedded-broker/kraft-broker.js'
import { createKafkaClient, DEFAULT_CONNECTION, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import type { Logger } from '../../lib/log/logger.js'
import { createTestTls, type TestTls } from './tls.js'

/** A broker that enforces ACLs, an admin on its open side, and a temporary folder: what stop() removes. */
export interface AclBroker {
  readonly broker: EmbeddedBroker
  readonly tls: TestTls
  /** The PLAINTEXT listener, whose principal (ANONYMOUS) is a super user: for setting up topics and ACLs. */
  readonly connection: KafkaConnectionConfig
  readonly admin: Admin
  readonly dir: string
  stop(): Promise<void>
}

/**
 * One broker for a test file: ACLs enforced (StandardAuthorizer), a SASL_SSL listener where `user` (SCRAM-SHA-256)
 * is held to the ACLs it is granted, and the PLAINTEXT listener for everything the test itself sets up.
 */
export async function startAclBroker(
  user: { readonly name: string; readonly password: string },
  dirPrefix: string,
  log: Logger
): Promise<AclBroker> {
  killEmbeddedBrokersOnExit()
  const tls = createTestTls()
  const dir = mkdtempSync(join(tmpdir(), dirPrefix))
  const broker = await startKraftBroker({
    security: {
      keystore: { path: tls.keystoreFile, password: tls.keystorePassword },
      saslSsl: { scramUsers: [{ mechanism: 'SCRAM-SHA-256', ...user }] }
    },
    serverOverrides: {
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:ANONYMOUS'
    }
  })
  const connection = { ...DEFAULT_CONNECTION, brokers: [broker.bootstrap], clientId: 'squeeze-test' }
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  return {
    broker,
    tls,
    connection,
    admin,
    dir,
    stop: async () => {
      await admin.disconnect().catch(() => undefined)
      await broker.stop()
      tls.remove()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
