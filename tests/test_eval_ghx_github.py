"""GitHub access through githubkit against the stand-in server: base URL, token,
retries, app auth."""

from __future__ import annotations

import time

import pytest
import trio

from github_standin import MAIN_TOKEN, REVIEWER_TOKEN, GitHubStandIn
from profiler_eval_ghx.github import (
    GitHubClient,
    GitHubError,
    api_url,
    second_identity,
    token_from_env,
)


@pytest.fixture
def standin():
    with GitHubStandIn() as server:
        yield server


def test_base_url_and_token_come_from_the_environment():
    assert api_url({}) == "https://api.github.com"
    assert (
        api_url({"GITHUB_API_URL": "https://ghe.example/api/v3/"})
        == "https://ghe.example/api/v3"
    )
    assert token_from_env({"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}) == "a"
    assert token_from_env({"GITHUB_TOKEN": "b"}) == "b"
    assert token_from_env({}) is None
    with pytest.raises(GitHubError, match="GH_TOKEN"):
        GitHubClient.from_env({})


def test_rest_and_graphql_reach_the_server_with_the_token(standin):
    client = GitHubClient.from_env(
        {"GITHUB_API_URL": standin.url, "GH_TOKEN": MAIN_TOKEN}
    )
    assert MAIN_TOKEN not in repr(client)

    async def main():
        issue = await client.rest(
            "POST", "/repos/octo/eval-sandbox/issues", json={"title": "hello"}
        )
        data = await client.graphql(
            "query IssueView($owner: String!, $name: String!, $number: Int!) { "
            "repository(owner: $owner, name: $name) { issue(number: $number) { "
            "id } } }",
            {"owner": "octo", "name": "eval-sandbox", "number": issue["number"]},
        )
        return issue, data

    issue, data = trio.run(main)
    assert data["repository"]["issue"]["id"] == issue["node_id"]
    assert standin.requests("POST", "/issues")[0][3] == "eval-bot"


def test_a_failed_call_names_the_request_and_status_but_not_the_token(standin):
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url)
    with pytest.raises(GitHubError) as info:
        trio.run(client.rest, "GET", "/repos/octo/eval-sandbox/issues/99")
    assert info.value.status == 404
    assert (
        str(info.value) == "GET /repos/octo/eval-sandbox/issues/99: HTTP 404 Not Found"
    )
    bad = GitHubClient("wrong-token", base_url=standin.url)
    with pytest.raises(GitHubError, match="HTTP 401 Bad credentials") as info:
        trio.run(bad.rest, "GET", "/repos/octo/eval-sandbox")
    assert "wrong-token" not in str(info.value)


def test_graphql_errors_become_one_line(standin):
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url)
    with pytest.raises(
        GitHubError,
        match="GraphQL IssueView: GraphQL error: Could not resolve to an Issue",
    ):
        trio.run(
            client.graphql,
            "query IssueView($owner: String!, $name: String!, $number: Int!) { x }",
            {"owner": "octo", "name": "eval-sandbox", "number": 5},
        )


def test_secondary_rate_limit_waits_for_retry_after_then_succeeds(standin):
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url)
    standin.fail_next(
        "GET",
        r"/labels$",
        403,
        headers={"Retry-After": "1"},
        message="You have exceeded a secondary rate limit",
    )
    started = time.monotonic()
    assert trio.run(client.rest, "GET", "/repos/octo/eval-sandbox/labels") == []
    assert time.monotonic() - started >= 0.9
    assert [r[2] for r in standin.requests("GET", "/labels")] == [403, 200]


def test_retries_are_bounded_in_count_and_wait(standin):
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url, max_retries=2, max_wait_s=5)
    standin.fail_next("GET", r"/labels$", 429, headers={"Retry-After": "0"}, times=5)
    started = time.monotonic()
    with pytest.raises(GitHubError, match="HTTP 429 rate limited"):
        trio.run(client.rest, "GET", "/repos/octo/eval-sandbox/labels")
    assert len(standin.requests("GET", "/labels")) == 3  # the call and two retries
    assert (
        time.monotonic() - started < 5
    )  # `Retry-After: 0` is not githubkit's 60s fallback
    # A primary limit resetting in an hour fails at once instead of stalling the run.
    reset = str(int(time.time()) + 3600)
    standin.fail_next(
        "GET",
        r"/issues$",
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
        message="API rate limit exceeded",
    )
    started = time.monotonic()
    with pytest.raises(
        GitHubError, match=r"HTTP 403 rate limited \(resets in 3[0-9]{3}s\)"
    ):
        trio.run(client.rest, "GET", "/repos/octo/eval-sandbox/issues")
    assert time.monotonic() - started < 5


def _rsa_pair() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        .decode()
    )
    return private, public


def test_github_app_installation_token_through_githubkit(tmp_path):
    private, public = _rsa_pair()
    key_file = tmp_path / "app.pem"
    key_file.write_text(private)
    with GitHubStandIn(app_public_key=public) as server:
        main = GitHubClient(MAIN_TOKEN, base_url=server.url)
        env = {
            "GHX_EVAL_APP_ID": str(server.app_id),
            "GHX_EVAL_APP_PRIVATE_KEY_PATH": str(key_file),
        }

        async def act():
            app = await second_identity(main, "octo/eval-sandbox", env)
            return await app.rest(
                "POST",
                "/repos/octo/eval-sandbox/issues",
                json={"title": "from the app"},
            )

        issue = trio.run(act)
        assert issue["user"]["login"] == "eval-app[bot]"
        # The JWT (verified by the stand-in with the public key) fetched an installation token.
        assert [r[3] for r in server.requests("POST", "/access_tokens")] == [
            f"app:{server.app_id}"
        ]
        # A JWT the server cannot verify is refused with the server's status.
        other, _ = _rsa_pair()
        with pytest.raises(GitHubError, match="HTTP 401"):
            trio.run(
                second_identity,
                main,
                "octo/eval-sandbox",
                {"GHX_EVAL_APP_ID": "999", "GHX_EVAL_APP_PRIVATE_KEY": other},
            )


def test_second_identity_from_a_reviewer_token_or_none(standin):
    main = GitHubClient(MAIN_TOKEN, base_url=standin.url)
    assert trio.run(second_identity, main, "octo/eval-sandbox", {}) is None
    reviewer = trio.run(
        second_identity,
        main,
        "octo/eval-sandbox",
        {"GHX_EVAL_REVIEWER_TOKEN": REVIEWER_TOKEN},
    )
    created = trio.run(
        lambda: reviewer.rest(
            "POST", "/repos/octo/eval-sandbox/issues", json={"title": "by reviewer"}
        )
    )
    assert created["user"]["login"] == "reviewer"
    with pytest.raises(GitHubError, match="PRIVATE_KEY"):
        trio.run(second_identity, main, "octo/eval-sandbox", {"GHX_EVAL_APP_ID": "1"})


def test_the_standin_answers_unknown_requests_with_404_and_logs_them(standin):
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url)
    for method, path in (
        ("GET", "/repos/octo/eval-sandbox/releases"),
        ("GET", "/repos/other/repo"),
        ("DELETE", "/repos/octo/eval-sandbox/issues/1"),
    ):
        with pytest.raises(GitHubError, match="HTTP 404") as info:
            trio.run(client.rest, method, path)
        assert info.value.status == 404
    assert [(m, p, s) for m, p, s, _ in standin.log] == [
        ("GET", "/repos/octo/eval-sandbox/releases", 404),
        ("GET", "/repos/other/repo", 404),
        ("DELETE", "/repos/octo/eval-sandbox/issues/1", 404),
    ]
