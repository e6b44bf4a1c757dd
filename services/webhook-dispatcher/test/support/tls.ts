import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  key: string;
  cert: string;
}

/**
 * A throwaway certificate authority made with openssl for one test file: its certificate goes in
 * WEBHOOK_CA_FILE, and it issues the receivers' certificates. Nothing here is trusted anywhere else.
 */
export class TestCa {
  private constructor(
    private readonly dir: string,
    readonly certFile: string,
  ) {}

  static create(): TestCa {
    const dir = mkdtempSync(join(tmpdir(), 'pmatch-test-ca-'));
    const ca = new TestCa(dir, join(dir, 'ca.crt'));
    openssl([
      'req',
      '-x509',
      ...ecKey(join(dir, 'ca.key')),
      '-out',
      ca.certFile,
      '-days',
      '3',
      '-subj',
      '/CN=pmatch webhook test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    return ca;
  }

  /** A server certificate for 127.0.0.1, ::1 and receiver.test, issued by this CA. */
  issueServerCertificate(): KeyPair {
    const key = join(this.dir, 'server.key');
    const csr = join(this.dir, 'server.csr');
    const cert = join(this.dir, 'server.crt');
    const ext = join(this.dir, 'server.ext');
    writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:receiver.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
    openssl(['req', ...ecKey(key), '-out', csr, '-subj', '/CN=receiver.test']);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.certFile,
      '-CAkey',
      join(this.dir, 'ca.key'),
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '3',
      '-extfile',
      ext,
    ]);
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  }

  /** A certificate for 127.0.0.1 that signs itself: no CA vouches for it. */
  selfSignedCertificate(): KeyPair {
    const key = join(this.dir, 'self.key');
    const cert = join(this.dir, 'self.crt');
    openssl(['req', '-x509', ...ecKey(key), '-out', cert, '-days', '3', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function ecKey(keyFile: string): string[] {
  return ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile];
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
