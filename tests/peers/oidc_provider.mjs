// A real OAuth 2.1 / OpenID authorization server (oidc-provider) for the tests.
//
// usage: node oidc_provider.mjs PORT
// Issuer http://127.0.0.1:PORT. Clients `tessera-test` and `tessera-other`
// (secret `tessera-secret`) may use
// client_credentials; access tokens are JWTs for the requested `resource`,
// signed with the algorithm named by the client's requested scope suffix:
// `alg:ES256` or `alg:EdDSA` in the scope picks that key, else RS256.
// Introspection is enabled. Prints `ready` when listening.

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const jwk = (type, options, alg) => {
  const { privateKey } = generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid: `${alg}-${randomUUID().slice(0, 8)}` };
};
const keys = [
  jwk('rsa', { modulusLength: 2048 }, 'RS256'),
  jwk('ec', { namedCurve: 'P-256' }, 'ES256'),
  jwk('ed25519', {}, 'EdDSA'),
];

const provider = new Provider(issuer, {
  clients: ['tessera-test', 'tessera-other'].map((client_id) => ({
    client_id,
    client_secret: 'tessera-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  jwks: { keys },
  scopes: ['counter:write', 'mcp:read', 'alg:ES256', 'alg:EdDSA'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        const requested = String(ctx.oidc.params?.scope ?? '');
        const alg = requested.includes('alg:EdDSA') ? 'EdDSA' : requested.includes('alg:ES256') ? 'ES256' : 'RS256';
        return {
          scope: 'counter:write mcp:read alg:ES256 alg:EdDSA',
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg } },
        };
      },
    },
  },
});
provider.listen(port, '127.0.0.1', () => console.log('ready'));
