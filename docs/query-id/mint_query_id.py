"""Mints analytics-chart query ids in Python, for host apps not written in JavaScript.

Copy this file into your app. It needs PyJWT (`pip install pyjwt`, or Debian's python3-jwt).
The id format is specified in docs/query-id.md of the analytics-chart repository.
"""

import base64
import secrets
import time

import jwt


def mint_query_id(
    kid,
    secret,
    query,
    *,
    params=None,
    subject=None,
    public=False,
    ttl=None,
    range_key=None,
    audience=None,
    now=None,
):
    """Returns a signed query id (a compact JWT, HS256) for a query of the edge's registry.

    `kid` and `secret` are one entry of EDGE_SIGNING_KEYS (`kid:secret`); the HMAC key is the
    secret's UTF-8 text exactly as written there, never its base64url-decoded bytes. Give either
    `subject` (the viewer's session subject: a session-bound id, 10 minutes by default) or
    `public=True` (no session check, 30 days by default). `params` are the locked parameters,
    such as the viewer's tenant.
    """
    if public == (subject is not None):
        raise ValueError("an id is either public or bound to a session subject")
    issued = int(time.time()) if now is None else int(now)
    lifetime = ttl if ttl is not None else (30 * 86400 if public else 600)
    claims = {"q": query}
    if params:
        claims["p"] = dict(params)
    if public:
        claims["pub"] = True
    else:
        claims["sub"] = subject
    claims["iat"] = issued
    claims["exp"] = issued + int(lifetime)
    claims["jti"] = base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()
    if range_key is not None:
        claims["r"] = range_key
    if audience is not None:
        claims["aud"] = audience
    token = jwt.encode(claims, secret, algorithm="HS256", headers={"kid": kid})
    # PyJWT 1.x returns bytes, 2.x a str.
    return token.decode("ascii") if isinstance(token, bytes) else token
