"""Graph export and import in the versioned, line-oriented ``kernel-graph`` format."""

from kernel.graph_io.exporter import ExportReport, export_graph
from kernel.graph_io.importer import ImportReport, import_graph
from kernel.graph_io.validation import validate_file

__all__ = ["ExportReport", "ImportReport", "export_graph", "import_graph", "validate_file"]
