package dev.runner.api;

/** Input the caller got wrong: a 400 whose message names the field and says what is expected. */
final class BadRequest extends RuntimeException {
    BadRequest(String message) {
        super(message);
    }
}
