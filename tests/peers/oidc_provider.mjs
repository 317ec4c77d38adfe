// A real OAuth 2.1 / OpenID authorization server (oidc-provider) for the tests.
//
// usage: node oidc_provider.mjs PORT
// Issuer http://127.0.0.1:PORT. Clients `tessera-test` and `tessera-other`
// (secret `tessera-secret`) may use
// client_credentials; access tokens are JWTs for the requested `resource`,
// signed with the algorithm named by the client's requested scope suffix:
// `alg:ES256` or `alg:EdDSA` in the scope picks that key, else RS256.
// Introspection is enabled. Authorization code flows (PKCE, dynamic client
// registration) complete without a person: the login and consent
// interactions approve user `alice` and the scopes asked for at once.
// Prints `ready` when listening.

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
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
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
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
// The interactions, approved at once: log `alice` in, grant what was asked.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: 'alice' } }, { mergeWithLastSubmission: false });
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  if (details.params.scope) grant.addOIDCScope(details.params.scope);
  for (const resource of [].concat(details.params.resource ?? [])) {
    grant.addResourceScope(resource, details.params.scope ?? '');
  }
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
const callback = provider.callback();
http.createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => { res.statusCode = 500; res.end(String(e)); });
  } else {
    callback(req, res);
  }
}).listen(port, '127.0.0.1', () => console.log('ready'));
