#!/usr/bin/env python3
"""Verifies a StackShip run attestation with securesystemslib (independent of StackShip's code).

Usage:
  verify-attestation.py --keys attestation-keys.json --envelope envelope.json [--subject FILE ...]

--keys     the document GET /.well-known/stackship/attestation-keys serves (or a PEM public key file)
--envelope a DSSE envelope (the `envelope` of GET /v1/runs/{id}/attestations, or "Download attestation")
--subject  an artifact the statement must name by sha256 (the saved plan, a state version's bytes)

Exit 0 and prints the statement's predicate when the signature verifies, the statement is an in-toto
Statement v1 of the run-decision predicate type and every --subject file is a subject; exit 1 otherwise.
Needs: pip install "securesystemslib[crypto]".
"""
import argparse
import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import load_pem_public_key
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://stackship.dev/attestations/run-decision/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def load_keys(path):
    text = open(path, encoding="utf-8").read()
    if text.lstrip().startswith("-----BEGIN"):
        public = load_pem_public_key(text.encode())
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        kid = hashlib.sha256(public.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).hexdigest()
        return [SSlibKey.from_crypto(public, keyid=kid, scheme="ecdsa-sha2-nistp256")]
    return [
        SSlibKey.from_crypto(load_pem_public_key(k["public_key_pem"].encode()), keyid=k["kid"], scheme="ecdsa-sha2-nistp256")
        for k in json.loads(text)["keys"]
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", required=True)
    parser.add_argument("--envelope", required=True)
    parser.add_argument("--subject", action="append", default=[])
    args = parser.parse_args()
    try:
        envelope = Envelope.from_dict(json.load(open(args.envelope, encoding="utf-8")))
        if envelope.payload_type != PAYLOAD_TYPE:
            raise ValueError(f"payloadType is {envelope.payload_type!r}, not {PAYLOAD_TYPE!r}")
        envelope.verify(load_keys(args.keys), 1)
        statement = json.loads(envelope.payload)
        if statement.get("_type") != STATEMENT_TYPE or statement.get("predicateType") != PREDICATE_TYPE:
            raise ValueError("not an in-toto Statement v1 of the run-decision predicate type")
        named = {s["digest"]["sha256"] for s in statement["subject"]}
        for path in args.subject:
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if digest not in named:
                raise ValueError(f"{path} (sha256 {digest}) is not a subject of the statement")
    except Exception as error:  # noqa: BLE001 - every failure is a refusal
        print(f"REFUSED: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"verified": True, "subject": statement["subject"], "predicate": statement["predicate"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
