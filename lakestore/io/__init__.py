from lakestore.io.fileio import FileIO, FileStatus, LocalFileIO

__all__ = ["FileIO", "FileStatus", "LocalFileIO"]
