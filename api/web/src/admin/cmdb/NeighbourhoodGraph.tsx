/** The neighbourhood of an entity as a graph (React Flow): rings by distance, edges labelled with the relationship type. */
import { Background, Controls, ReactFlow, useReactFlow, type Edge, type Node } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useMemo } from 'react';
import { useNavigate } from 'react-router';
import type { Schemas } from '../../api/client';

const healthFill: Record<string, string> = { healthy: '#d3f9d8', degraded: '#ffe8cc', unhealthy: '#ffe3e3', down: '#ffc9c9', unknown: '#f1f3f5' };

/**
 * Fits the view again whenever the set of nodes changes: the `fitView` prop fits only the first
 * render, so a node added later (a new relationship) could land outside the view.
 */
function FitOnNodeSetChange({ nodeSet }: { nodeSet: string }) {
  const { fitView } = useReactFlow();
  useEffect(() => {
    // React Flow queues the fit until the new nodes have been measured.
    void fitView();
  }, [nodeSet, fitView]);
  return null;
}

export function NeighbourhoodGraph({ data }: { data: Schemas['CmdbNeighbourhood'] }) {
  const navigate = useNavigate();
  const { nodes, edges } = useMemo(() => {
    const byDistance = new Map<number, typeof data.entities>();
    for (const e of data.entities) byDistance.set(e.distance, [...(byDistance.get(e.distance) ?? []), e]);
    const nodes: Node[] = [];
    for (const [distance, ring] of byDistance) {
      ring.forEach((e, i) => {
        const angle = (2 * Math.PI * i) / ring.length + distance * 0.4;
        const r = distance * 220;
        nodes.push({
          id: e.id,
          position: { x: r * Math.cos(angle), y: r * Math.sin(angle) },
          data: { label: `${e.name}\n(${e.type})` },
          style: { background: healthFill[e.health] ?? '#fff', border: e.id === data.entity_id ? '2px solid #1c7ed6' : '1px solid #adb5bd', fontSize: 11, whiteSpace: 'pre-line', width: 170 },
        });
      });
    }
    const edges: Edge[] = data.relationships.map((r) => ({ id: r.id, source: r.from_entity_id, target: r.to_entity_id, label: r.type, labelStyle: { fontSize: 10 } }));
    return { nodes, edges };
  }, [data]);
  return (
    <div style={{ height: 420, border: '1px solid var(--mantine-color-gray-3)', borderRadius: 4 }} aria-label="Neighbourhood graph" role="img">
      <ReactFlow nodes={nodes} edges={edges} fitView nodesConnectable={false} onNodeClick={(_, n) => n.id !== data.entity_id && navigate(`/admin/cmdb/${n.id}`)} proOptions={{ hideAttribution: true }}>
        <Background />
        <Controls showInteractive={false} />
        <FitOnNodeSetChange nodeSet={nodes.map((n) => n.id).sort().join(' ')} />
      </ReactFlow>
    </div>
  );
}
