package dev.runner.local.template;

/** The template cannot be run locally; the message names the resource and property. */
public final class TemplateException extends RuntimeException {
    public TemplateException(String message) {
        super(message);
    }
}
