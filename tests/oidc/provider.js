// A real OpenID provider for the sign-in tests: panva's oidc-provider (OpenID Certified), with
// its development login and consent pages (any password; the login names the account), one
// confidential client (the judge) and the accounts below. Started by tests/app/utils/idp.py:
//   node provider.js PORT REDIRECT_URI [REDIRECT_URI ...]
// It prints "ready ISSUER" once it listens. Nothing here is for production. With
// IDP_CLAIMS_IN_ID_TOKEN=1 the ID token itself carries the e-mail and profile claims; otherwise
// (the provider's default, to the letter of the spec) only the userinfo endpoint does.
import Provider from 'oidc-provider';

const [port, ...redirectUris] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

// the university's people: some on the course's roster, one not, one with an unverified e-mail
const ACCOUNTS = {
  'alice-sub': { email: 'Alice@Example.edu', email_verified: true, preferred_username: 'alice', name: 'Alice' },
  'tara-sub': { email: 'tara@example.edu', email_verified: true, preferred_username: 'tara', name: 'Tara' },
  'mallory-sub': { email: 'mallory@example.edu', email_verified: true, preferred_username: 'mallory', name: 'Mallory' },
  'eve-sub': { email: 'bob@example.edu', email_verified: false, preferred_username: 'eve', name: 'Eve' },
  // bob's address "verified" by values that are not JSON true, or not said to be verified at all
  'eve-string-sub': { email: 'bob@example.edu', email_verified: 'false', preferred_username: 'eve2', name: 'Eve' },
  'eve-zero-sub': { email: 'bob@example.edu', email_verified: 0, preferred_username: 'eve3', name: 'Eve' },
  'eve-missing-sub': { email: 'bob@example.edu', preferred_username: 'eve4', name: 'Eve' },
  'eve-yes-sub': { email: 'bob@example.edu', email_verified: 'true', preferred_username: 'eve5', name: 'Eve' },
  // addresses that fold into a roster member's: a KELVIN SIGN for K, a NUL, a zero-width joiner
  'kelvin-sub': { email: '\u212Aate@example.edu', email_verified: true, preferred_username: 'kelvin', name: 'Kelvin' },
  'nul-sub': { email: 'kate\u0000@example.edu', email_verified: true, preferred_username: 'nul', name: 'Nul' },
  'zwj-sub': { email: 'ka\u200Dte@example.edu', email_verified: true, preferred_username: 'zwj', name: 'Zwj' },
};

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'flashjudge',
    client_secret: 'flashjudge-test-secret',
    redirect_uris: redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'name'],
  },
  async findAccount(ctx, sub) {
    const claims = ACCOUNTS[sub];
    if (!claims) return undefined; // an unknown login fails at the IdP, as a wrong password would
    return { accountId: sub, async claims() { return { sub, ...claims }; } };
  },
  cookies: { keys: ['flashjudge-test-cookie-key'] },
  conformIdTokenClaims: process.env.IDP_CLAIMS_IN_ID_TOKEN !== '1',
});

provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`ready ${issuer}`);
});
