"""The six-triple "mini" KG's two-role graph, shared by the CLI tests' team files."""

MINI_GRAPH = """\
kg:
  backend: oxigraph
  name: mini
roles:
  - t_linker
  - t_answerer
routes:
  - {kind: question, sender: user, to: t_linker}
  - {kind: entity_candidates, to: t_answerer}
"""
