"""A client of `vouch serve` on Python's standard http.client, as the App Store, Stripe and an
app's backend talk to it: the tests of `vouch serve` run it against the built binary.

  serve_client.py story URL DIR TOKEN [--clients N] [--seconds S] [--repeat R] [--webhooks-only 1]
      Posts every delivery of a `vouch mint story` directory in arrival order, split over
      N clients (threads, one keep-alive connection each): notifications to
      /v1/apple/notifications, the app's transactions to /v1/accounts/ACCOUNT/purchases as
      {"jws":…}, Stripe deliveries to /v1/stripe/webhook with their Stripe-Signature. A
      delivery is sent again until it is answered 200 (a 5xx, a reset or refused connection
      is retried after a short pause), for at most S seconds in all; R > 1 sends every
      delivery R times, as a sender's retries would; --webhooks-only 1 leaves the purchases
      out. Prints one JSON object: {"deliveries":…,
      "answered":{"STATUS":count},"retries":…,"unanswered":…}.
  serve_client.py get URL PATH TOKEN
      One GET; prints the status, a newline, then the body.
  serve_client.py slow URL SECONDS
      Opens a connection, sends half a request line and stalls; prints how many seconds
      passed until the server closed it (at most SECONDS).
"""

import http.client
import json
import os
import socket
import sys
import threading
import time
import urllib.parse


def connection(url):
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)


def deliveries(directory, webhooks_only):
    """(path, body, headers, needs token) for each arrival, in order; without the app's own
    transactions (the purchases) when `webhooks_only`."""
    files = {}
    for name in ("app-store.jsonl", "stripe.jsonl"):
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            files[name] = handle.read().splitlines()
    result = []
    with open(os.path.join(directory, "arrivals.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            arrival = json.loads(line)
            text = files[arrival["file"]][arrival["line"] - 1]
            if arrival["file"] == "stripe.jsonl":
                stored = json.loads(text)
                result.append(("/v1/stripe/webhook", stored["body"].encode(),
                               {"Stripe-Signature": stored["stripe-signature"]}, False))
            elif text.startswith("{"):
                result.append(("/v1/apple/notifications", text.encode(), {}, False))
            elif not webhooks_only:
                path = "/v1/accounts/%s/purchases" % urllib.parse.quote(arrival["account"])
                result.append((path, json.dumps({"jws": text}).encode(), {}, True))
    return result


def story(url, directory, token, clients, seconds, repeat, webhooks_only):
    work = deliveries(directory, webhooks_only) * repeat
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    answered, counts = {}, {"retries": 0, "unanswered": 0}

    def run(share):
        client = connection(url)
        for path, body, headers, needs_token in share:
            headers = dict(headers)
            headers["Content-Type"] = "application/json"
            if needs_token:
                headers["Authorization"] = "Bearer " + token
            while True:
                status = None
                try:
                    client.request("POST", path, body=body, headers=headers)
                    response = client.getresponse()
                    response.read()
                    status = response.status
                    if response.getheader("Connection", "").lower() == "close":
                        client.close()
                except (OSError, http.client.HTTPException):
                    client.close()
                with lock:
                    if status is not None:
                        answered[str(status)] = answered.get(str(status), 0) + 1
                    if status == 200 or (status is not None and status < 500):
                        break
                    if time.monotonic() > deadline:
                        counts["unanswered"] += 1
                        break
                    counts["retries"] += 1
                time.sleep(0.05)
        client.close()

    threads = [threading.Thread(target=run, args=(work[index::clients],)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"deliveries": len(work), "answered": answered, "retries": counts["retries"],
                      "unanswered": counts["unanswered"]}, sort_keys=True))


def get(url, path, token):
    client = connection(url)
    client.request("GET", path, headers={"Authorization": "Bearer " + token})
    response = client.getresponse()
    body = response.read()
    sys.stdout.write("%d\n" % response.status)
    sys.stdout.write(body.decode())
    client.close()


def slow(url, seconds):
    parts = urllib.parse.urlsplit(url)
    started = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=seconds) as stalled:
        stalled.sendall(b"GET /healthz HT")
        try:
            while stalled.recv(1024):
                pass
        except (socket.timeout, OSError):
            pass
    print("%.1f" % (time.monotonic() - started))


def main(arguments):
    command = arguments[0]
    if command == "story":
        options = {"--clients": 1, "--seconds": 60, "--repeat": 1, "--webhooks-only": 0}
        rest = arguments[4:]
        for index in range(0, len(rest), 2):
            options[rest[index]] = int(rest[index + 1])
        story(arguments[1], arguments[2], arguments[3], options["--clients"], options["--seconds"],
              options["--repeat"], options["--webhooks-only"] == 1)
    elif command == "get":
        get(arguments[1], arguments[2], arguments[3])
    elif command == "slow":
        slow(arguments[1], float(arguments[2]))
    else:
        raise SystemExit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv[1:])
