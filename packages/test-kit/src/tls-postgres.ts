import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrateToLatest } from "@outbox/client";
import { createDatabaseOn, type RunningPostgres, startEmbeddedPostgres } from "@outbox/devstack";
import { createDatabase, type DatabaseHandle, migrateExampleTables } from "@outbox/shared";
import forge from "node-forge";

interface Issued {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
}

/** An RSA key from Node's crypto (native, fast), in forge's form for signing. */
function rsaKey(): { keyPem: string; key: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  return {
    keyPem: privateKey,
    key: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey),
  };
}

/** A certificate valid from a minute ago for a day: a CA's when `issuer` is absent (self-signed). */
function issue(commonName: string, issuer?: Issued): Issued {
  const { keyPem, key, publicKey } = rsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive (leading 0 nibble) and unique, as X.509 wants.
  cert.serialNumber = `0${randomBytes(8).toString("hex")}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3_600_000);
  cert.setSubject([{ name: "commonName", value: commonName }]);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : [{ name: "commonName", value: commonName }]);
  cert.setExtensions(
    issuer
      ? [
          { name: "basicConstraints", cA: false },
          { name: "keyUsage", critical: true, digitalSignature: true, keyEncipherment: true },
          { name: "extKeyUsage", serverAuth: true },
          // DNS name 2, IP address 7: the server is reached as either.
          {
            name: "subjectAltName",
            altNames: [
              { type: 2, value: "localhost" },
              { type: 7, ip: "127.0.0.1" },
            ],
          },
          { name: "subjectKeyIdentifier" },
          {
            name: "authorityKeyIdentifier",
            keyIdentifier: issuer.cert.generateSubjectKeyIdentifier().getBytes(),
          },
        ]
      : [
          { name: "basicConstraints", critical: true, cA: true },
          { name: "keyUsage", critical: true, keyCertSign: true, cRLSign: true },
          { name: "subjectKeyIdentifier" },
        ],
  );
  cert.sign(issuer?.key ?? key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem, cert, key };
}

export interface TlsPostgres {
  readonly server: RunningPostgres;
  /** The CA that signed the server's certificate (for localhost and 127.0.0.1), as a PEM file. */
  readonly caFile: string;
  /** Another CA, which signed nothing the server has. */
  readonly wrongCaFile: string;
  /** Creates a database and returns its URL, without `sslmode`: the TLS settings under test decide. */
  createDatabase(label: string): Promise<string>;
  /** `createDatabase`, migrated, with the test's own handle on it, connected verify-full. */
  createMigratedDatabase(label: string, service: string): Promise<{ url: string; handle: DatabaseHandle }>;
  stop(): Promise<void>;
}

/**
 * A throw-away embedded Postgres that accepts TLS connections only (like RDS with rds.force_ssl),
 * with a certificate from a CA made here, in JavaScript (no openssl CLI needed).
 */
export async function startTlsPostgres(): Promise<TlsPostgres> {
  const ca = issue("outbox test CA");
  const wrongCa = issue("outbox test CA");
  const leaf = issue("localhost", ca);
  const server = await startEmbeddedPostgres({ tls: { cert: leaf.certPem, key: leaf.keyPem } });
  const dir = await mkdtemp(join(tmpdir(), "outbox-tls-"));
  const caFile = join(dir, "ca.pem");
  const wrongCaFile = join(dir, "wrong-ca.pem");
  await writeFile(caFile, ca.certPem);
  await writeFile(wrongCaFile, wrongCa.certPem);
  const createDatabaseWithoutTlsSettings = async (label: string) => {
    const name = `t_${label}_${randomBytes(4).toString("hex")}`;
    const url = new URL(await createDatabaseOn(server.adminUrl, name));
    url.search = "";
    return url.toString();
  };
  return {
    server,
    caFile,
    wrongCaFile,
    createDatabase: createDatabaseWithoutTlsSettings,
    async createMigratedDatabase(label, service) {
      const url = await createDatabaseWithoutTlsSettings(label);
      const handle = createDatabase({
        url,
        service,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 5_000,
        ssl: { mode: "verify-full", caFile },
      });
      await migrateToLatest(handle.db);
      await migrateExampleTables(handle.db);
      return { url, handle };
    },
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
