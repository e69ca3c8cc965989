/**
 * Test fixtures: an OIDC issuer over HTTPS on 127.0.0.1 (certificate from an in-process CA)
 * serving discovery documents and a JWKS that tests can change, and token signing.
 *
 * @module
 */

import { stringify } from "yaml";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { ensurePki, type Pki } from "../certificates/pki.ts";
import { silentLogger } from "../api/log.ts";

export type Json = Record<string, unknown>;

export interface SigningKey {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(alg: "RS256" | "ES256", kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

/**
 * The issuer: discovery at the well-known path, `/custom/discovery` (same issuer),
 * `/impostor/discovery` (another issuer) and the keys at `/keys`.
 */
export class Issuer {
  readonly url: string;
  /** The keys the JWKS serves; tests change it to rotate keys. */
  keys: SigningKey[] = [];
  jwksFetches = 0;
  /** While set, discovery answers 503. */
  down = false;
  /** How long the key set takes to answer (a slow issuer). */
  keysDelayMs = 0;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  constructor(pki: Pki) {
    this.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: pki.servingCertPem,
      key: pki.servingKeyPem,
      onListen() {},
    }, async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/keys" && this.keysDelayMs > 0) {
        await new Promise((r) => setTimeout(r, this.keysDelayMs));
      }
      return this.#handle(path);
    });
    this.url = `https://127.0.0.1:${this.#server.addr.port}`;
  }

  #handle(path: string): Response {
    switch (path) {
      case "/.well-known/openid-configuration":
        if (this.down) return new Response("down", { status: 503 });
        return Response.json({ issuer: this.url, jwks_uri: `${this.url}/keys` });
      case "/custom/discovery":
        return Response.json({ issuer: this.url, jwks_uri: `${this.url}/keys` });
      case "/impostor/discovery":
        return Response.json({
          issuer: "https://impostor.example.com",
          jwks_uri: `${this.url}/keys`,
        });
      case "/keys":
        this.jwksFetches++;
        return Response.json({ keys: this.keys.map((k) => k.jwk) });
      default:
        return new Response("not found", { status: 404 });
    }
  }

  async [Symbol.asyncDispose]() {
    await this.#server.shutdown();
  }
}

export const now = () => Math.floor(Date.now() / 1000);

export async function sign(
  key: SigningKey,
  claims: JWTPayload,
  header: Json = {},
): Promise<string> {
  return await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...header })
    .sign(key.privateKey);
}

/** An issuer whose serving certificate comes from a CA of its own, made under `dir`, serving
 * one signing key. */
export async function startIssuer(
  dir: string,
  alg: "RS256" | "ES256" = "ES256",
  kid = "key-1",
): Promise<{ issuer: Issuer; pki: Pki; key: SigningKey }> {
  const pki = await ensurePki({
    dataDir: `${dir}/issuer-pki`,
    sans: [],
    bindAddress: "127.0.0.1",
    logger: silentLogger,
  });
  const issuer = new Issuer(pki);
  const key = await signingKey(alg, kid);
  issuer.keys = [key];
  return { issuer, pki, key };
}

/** An AuthenticationConfiguration file's text with one JWT authenticator: tokens of `issuer`
 * for `audience`, the `sub` claim as the username after `oidc:`. */
export function jwtAuthenticationConfig(issuer: Issuer, pki: Pki, audience: string): string {
  return stringify({
    apiVersion: "apiserver.platform.io/v1beta1",
    kind: "AuthenticationConfiguration",
    jwt: [{
      issuer: { url: issuer.url, certificateAuthority: pki.caCertPem, audiences: [audience] },
      claimMappings: { username: { claim: "sub", prefix: "oidc:" } },
    }],
  });
}
