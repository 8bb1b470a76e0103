/**
 * Secrets read at run time from Secrets Manager, never from the environment: each {@link
 * dev.runner.secrets.Secret} is read on first use, kept in memory, and re-read when the
 * credentials it holds are refused (a rotation). The composition root decides which secrets a
 * function may read ({@code app.Grants}); template.yaml grants exactly those.
 */
package dev.runner.secrets;
