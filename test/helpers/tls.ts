import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A throwaway CA, a server certificate signed by it, the PKCS12 keystore Kafka reads, and a client certificate
 * for mutual TLS. The server certificate names only IP 127.0.0.1, not `localhost`: a client that connects
 * to localhost meets a certificate whose name does not match (host-name check tests).
 */
export interface TestTls {
  readonly dir: string
  /** PEM CA certificate that signed the server certificate. */
  readonly caFile: string
  /** PEM CA certificate of a second, unrelated CA (for "wrong CA" tests). */
  readonly otherCaFile: string
  readonly serverCertFile: string
  readonly serverKeyFile: string
  /** PKCS12 keystore holding the server key and certificate chain. */
  readonly keystoreFile: string
  readonly keystorePassword: string
  /** PEM client certificate and key, signed by the CA (clientAuth). */
  readonly clientCertFile: string
  readonly clientKeyFile: string
  remove(): void
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.pem`)
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=squeeze test ${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir)
  return { cert, key }
}

/** Creates everything with the openssl CLI in a fresh temp dir (about a second). */
export function createTestTls(): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-tls-'))
  const keystorePassword = 'squeeze-keystore-pw'
  const ca = makeCa(dir, 'ca')
  const other = makeCa(dir, 'other-ca')
  const serverKeyFile = join(dir, 'server.key')
  const csr = join(dir, 'server.csr')
  const serverCertFile = join(dir, 'server.pem')
  const ext = join(dir, 'server.ext')
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n')
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', serverKeyFile, '-out', csr, '-subj', '/CN=squeeze test broker'], dir)
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', serverCertFile, '-days', '2', '-extfile', ext], dir)
  const clientKeyFile = join(dir, 'client.key')
  const clientCsr = join(dir, 'client.csr')
  const clientCertFile = join(dir, 'client.pem')
  const clientExt = join(dir, 'client.ext')
  writeFileSync(clientExt, 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n')
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', clientKeyFile, '-out', clientCsr, '-subj', '/CN=squeeze-client'], dir)
  openssl(['x509', '-req', '-in', clientCsr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', clientCertFile, '-days', '2', '-extfile', clientExt], dir)
  const keystoreFile = join(dir, 'server.p12')
  openssl(['pkcs12', '-export', '-in', serverCertFile, '-inkey', serverKeyFile, '-certfile', ca.cert, '-name', 'broker', '-out', keystoreFile, '-passout', `pass:${keystorePassword}`], dir)
  return {
    dir,
    caFile: ca.cert,
    otherCaFile: other.cert,
    serverCertFile,
    serverKeyFile,
    keystoreFile,
    keystorePassword,
    clientCertFile,
    clientKeyFile,
    remove: () => rmSync(dir, { recursive: true, force: true })
  }
}
