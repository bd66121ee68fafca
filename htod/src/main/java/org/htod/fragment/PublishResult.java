package org.htod.fragment;

import java.util.List;

/**
 * What one unit of changes did, once it is durable.
 *
 * @param changed the paths published or unpublished, in the order given (an unpublish of a
 *     path that was not published is not listed)
 * @param rebuilt the assembled fragments written to cache2, in the order they were built:
 *     dependencies first
 * @param reconstructed how many of {@code rebuilt} were rebuilt by replacing the spans of their
 *     changed includes, not assembled from their source
 * @param writes puts and removes the unit made
 */
public record PublishResult(List<String> changed, List<String> rebuilt, int reconstructed, int writes) {
    public PublishResult {
        changed = List.copyOf(changed);
        rebuilt = List.copyOf(rebuilt);
    }
}
