package dev.sluice.runtime;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Finds the cycles of a pipeline graph (edges: upstream → downstream), to name them exactly. */
final class Cycles {

    private Cycles() {}

    /** The strongly connected components (Tarjan); a cycle lies within one. */
    static List<List<PipelineNode>> stronglyConnected(Collection<PipelineNode> nodes) {
        return new StronglyConnected(nodes).components;
    }

    /** The shortest path from {@code start} back to itself inside {@code within} (breadth first), or null. */
    static List<PipelineNode> shortestThrough(PipelineNode start, Set<PipelineNode> within) {
        Map<PipelineNode, PipelineNode> cameFrom = new HashMap<>();
        Deque<PipelineNode> queue = new ArrayDeque<>(List.of(start));
        while (!queue.isEmpty()) {
            PipelineNode node = queue.poll();
            for (PipelineNode.Edge edge : node.downstream) {
                PipelineNode next = edge.to();
                if (next == start) {
                    List<PipelineNode> path = new ArrayList<>();
                    for (PipelineNode at = node; at != start; at = cameFrom.get(at)) {
                        path.add(0, at);
                    }
                    path.add(0, start);
                    return path;
                }
                if (within.contains(next) && !cameFrom.containsKey(next)) {
                    cameFrom.put(next, node);
                    queue.add(next);
                }
            }
        }
        return null;
    }

    /** Tarjan's strongly connected components over the downstream edges. */
    private static final class StronglyConnected {
        private final Map<PipelineNode, Integer> index = new HashMap<>();
        private final Map<PipelineNode, Integer> low = new HashMap<>();
        private final Deque<PipelineNode> stack = new ArrayDeque<>();
        private final Set<PipelineNode> onStack = new HashSet<>();
        private final List<List<PipelineNode>> components = new ArrayList<>();

        StronglyConnected(Collection<PipelineNode> nodes) {
            for (PipelineNode node : nodes) {
                if (!index.containsKey(node)) {
                    visit(node);
                }
            }
        }

        // Pipelines have tens of nodes: recursion depth is no concern.
        private void visit(PipelineNode node) {
            index.put(node, index.size());
            low.put(node, index.get(node));
            stack.push(node);
            onStack.add(node);
            for (PipelineNode.Edge edge : node.downstream) {
                PipelineNode next = edge.to();
                if (!index.containsKey(next)) {
                    visit(next);
                    low.put(node, Math.min(low.get(node), low.get(next)));
                } else if (onStack.contains(next)) {
                    low.put(node, Math.min(low.get(node), index.get(next)));
                }
            }
            if (low.get(node).equals(index.get(node))) {
                List<PipelineNode> component = new ArrayList<>();
                PipelineNode member;
                do {
                    member = stack.pop();
                    onStack.remove(member);
                    component.add(member);
                } while (member != node);
                components.add(component);
            }
        }
    }
}
