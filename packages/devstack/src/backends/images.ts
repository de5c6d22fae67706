/**
 * The container images of the containers backend, pinned to exact tags so that a run does not
 * change under us when a registry moves a tag. docker-compose.yml pins the same two;
 * test/images.test.ts checks that they agree.
 */

/**
 * 4.14.0 (26 Feb 2026) is LocalStack's last release that starts without `LOCALSTACK_AUTH_TOKEN`:
 * from 2026.03.0 (23 Mar 2026) on, the image exits with code 55 unless a token activates it, so a
 * floating `4` or `latest` is one retag away from breaking. Sources: LocalStack's changelog
 * (https://github.com/localstack/localstack-docs/pull/620: semantic versions up to v4.14.0, then
 * v2026.03) and testcontainers-dotnet's LocalStack module, written with the LocalStack team
 * (https://github.com/testcontainers/testcontainers-dotnet/pull/1667: token required after 4.14).
 */
export const LOCALSTACK_IMAGE = "localstack/localstack:4.14.0";

/** Postgres 17, the major the docs and compose promise, at an exact minor. */
export const POSTGRES_IMAGE = "postgres:17.11-alpine";
