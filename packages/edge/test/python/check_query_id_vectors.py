"""Checks docs/query-id/vectors.json with PyJWT and Python's own HMAC, then mints ids with the
documented Python minting function and prints them as JSON for the TypeScript side to verify.

Run with Debian's python3 (python3-jwt): python3 check_query_id_vectors.py <repo root>
"""

import base64
import hashlib
import hmac
import json
import os
import sys

import jwt

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "docs", "query-id"))
from mint_query_id import mint_query_id  # noqa: E402

with open(os.path.join(root, "docs", "query-id", "vectors.json"), encoding="utf-8") as f:
    vectors = json.load(f)
keys = {k["kid"]: k["secret"] for k in vectors["keys"]}
now = vectors["now"]
failures = []


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verify(token):
    kid = jwt.get_unverified_header(token).get("kid")
    if kid not in keys:
        raise jwt.InvalidTokenError("unknown kid")
    return jwt.decode(token, keys[kid], algorithms=["HS256"], options={"verify_exp": False, "verify_aud": False})


for v in vectors["valid"]:
    # The token by hand: the exact texts, base64url without padding, HMAC keyed with UTF-8 text.
    signing_input = b64(v["header"].encode("utf-8")) + "." + b64(v["payload"].encode("utf-8"))
    mac = hmac.new(keys[v["kid"]].encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256)
    if signing_input + "." + b64(mac.digest()) != v["token"]:
        failures.append(f"{v['name']}: HMAC by hand differs from the vector's token")
    claims = verify(v["token"])
    if claims != json.loads(v["payload"]):
        failures.append(f"{v['name']}: PyJWT decoded other claims")
    if not claims["exp"] > now:
        failures.append(f"{v['name']}: expired at the vectors' now")

for v in vectors["invalid"]:
    if v["layer"] != "signature":
        continue
    try:
        verify(v["token"])
        failures.append(f"{v['name']}: PyJWT accepted it")
    except jwt.InvalidTokenError:
        pass

current = vectors["keys"][0]
minted = {
    "session": mint_query_id(current["kid"], current["secret"], "dashboard-signups", params={"tenant": "acme"}, subject="alice@acme", now=now, range_key="7d"),
    "public": mint_query_id(current["kid"], current["secret"], "public-events", params={"tenant": "globex"}, public=True, now=now, audience=["https://blog.example.com"]),
}
print(json.dumps({"failures": failures, "minted": minted, "pyjwt": jwt.__version__}))
