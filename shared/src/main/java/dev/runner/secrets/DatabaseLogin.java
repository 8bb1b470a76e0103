package dev.runner.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

/** The database secret's value: JSON with {@code username} and {@code password}, the shape RDS-managed secrets have. */
public record DatabaseLogin(String username, String password) {

    public static DatabaseLogin parse(String secretId, String json) {
        JsonNode node;
        try {
            node = Json.parse(json);
        } catch (Json.InvalidJsonException e) {
            throw new SecretUnavailableException("secret " + secretId + " is not JSON with username and password", null);
        }
        String username = node.path("username").asText("");
        String password = node.path("password").asText("");
        if (username.isEmpty() || password.isEmpty()) {
            throw new SecretUnavailableException("secret " + secretId + " lacks username or password", null);
        }
        return new DatabaseLogin(username, password);
    }

    @Override
    public String toString() {
        return "DatabaseLogin[username=" + username + ", password=***]";
    }
}
