package dev.runner.integration;

/** One handler of one integration type: the unit that is paused, limited and called. */
public record HandlerRef(String integrationKey, String handlerKey) {

    @Override
    public String toString() {
        return integrationKey + "/" + handlerKey;
    }
}
