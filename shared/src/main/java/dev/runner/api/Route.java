package dev.runner.api;

import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;

/** One route's work, given the request and who made it (already admitted by the route's {@link Access}). */
@FunctionalInterface
interface Route {
    ApiResponse handle(ApiRequest request, Caller caller);
}
